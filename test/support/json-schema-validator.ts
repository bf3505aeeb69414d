import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/** A validator for one of the shipped schemas in schemas/, as a tool outside Datalyst would use it. */
export function shippedSchemaValidator(name: string): (value: unknown) => string[] {
  return validatorFor(
    JSON.parse(readFileSync(new URL(`../../schemas/${name}`, import.meta.url), 'utf8')) as object,
  );
}

/** A JSON Schema (draft 2020-12) checked with ajv: the list of what does not match. */
export function validatorFor(schema: object): (value: unknown) => string[] {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats.default(ajv);
  const validate = ajv.compile(schema);
  return (value) =>
    validate(value)
      ? []
      : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ''}`);
}
