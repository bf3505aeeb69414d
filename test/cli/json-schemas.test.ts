import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { generateJsonSchemas, schemasDir } from '../../scripts/json-schemas.ts';
import type { AgentEvent } from '../../src/index.ts';
import { agentEventLineSchemas, type JsonLine } from '../../src/cli/json-line-schema.ts';
import { parseConfigFile } from '../../src/config/index.ts';
import { shippedSchemaValidator } from '../support/json-schema-validator.ts';

// Fails to compile when an agent event has no line in the --json schema (or the schema one no event has).
type Uncovered = Exclude<AgentEvent['type'], JsonLine['type']>;
const everyEventCovered: [Uncovered] extends [never] ? true : Uncovered = true;

describe('the shipped JSON Schemas', () => {
  it('are what the zod schemas generate (run `npm run schemas` after changing one)', async () => {
    for (const [name, text] of Object.entries(generateJsonSchemas())) {
      expect(await readFile(`${schemasDir}${name}`, 'utf8'), name).toBe(text);
    }
  });

  it('cover every agent event in the --json lines', () => {
    expect(everyEventCovered).toBe(true);
    const lineTypes = agentEventLineSchemas.map((schema) => schema.shape.type.value);
    expect(new Set(lineTypes).size).toBe(lineTypes.length);
  });

  it('check a config file as Datalyst does: $schema allowed, unknown keys refused', () => {
    const validate = shippedSchemaValidator('config.schema.json');
    const config = {
      $schema: './node_modules/datalyst/schemas/config.schema.json',
      model: { id: 'DeepAnalyze-8B', baseUrl: 'http://localhost:8000/v1', profile: 'deepanalyze' },
      maxRounds: 20,
      formats: ['html', 'ipynb'],
    };
    expect(validate(config)).toEqual([]);
    expect(parseConfigFile(JSON.stringify(config), 'datalyst.config.json')).toMatchObject({ maxRounds: 20 });
    expect(validate({ ...config, maxRound: 20 })).not.toEqual([]);
  });

  it('accept every line of a recorded trace', async () => {
    const validate = shippedSchemaValidator('trace-record.schema.json');
    const text = await readFile(
      new URL('../fixtures/traces/student-loan/trace.jsonl', import.meta.url),
      'utf8',
    );
    const lines = text.split('\n').filter((line) => line.trim() !== '');
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) expect(validate(JSON.parse(line))).toEqual([]);
  });
});
