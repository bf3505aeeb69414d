// The public library API: each folder names its exports in its own index.ts.
export * from './errors/index.ts';
