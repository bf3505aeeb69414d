// The public library API: each folder names its exports in its own index.ts.
export * from './errors/index.ts';
export * from './trace/index.ts';
export * from './config/index.ts';
