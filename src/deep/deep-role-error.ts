import { DatalystError } from '../errors/index.ts';

/** A role of a deep analysis (scope, supervise, compress, plan, write) gave no usable reply, after one repair. */
export class DeepRoleError extends DatalystError {
  constructor(
    readonly role: string,
    message: string,
    cause?: unknown,
  ) {
    super('DEEP_ROLE_FAILED', `The ${role} step failed: ${message}`, {
      fault: 'third-party',
      fix: 'Check that the model follows instructions well enough to answer in the asked JSON, or use a stronger model.',
      cause,
    });
  }
}
