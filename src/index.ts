// The public library API: each folder names its exports in its own index.ts.
export * from './errors/index.ts';
export * from './trace/index.ts';
export * from './sandbox/index.ts';
export * from './agent/index.ts';
export * from './config/index.ts';
export * from './report/index.ts';
