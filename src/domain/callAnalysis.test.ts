import { describe, expect, it } from 'vitest';
import { checkAnalysisSettings, extractionFieldsSchema, noAnalysisSettings } from './callAnalysis.js';

describe('checkAnalysisSettings', () => {
  it('reads the settings, with nothing asked for by default', () => {
    expect(checkAnalysisSettings(undefined)).toEqual(noAnalysisSettings);
    const schema = { type: 'object', properties: { outcome: { enum: ['yes', 'no'] } } };
    expect(
      checkAnalysisSettings({ data_schema: schema, summary: true, success_rubric: 'Booked.' }, 'llm'),
    ).toEqual({
      dataSchema: schema,
      summary: true,
      successRubric: 'Booked.',
    });
    // A script fills data by its schema; the schema alone needs no language model.
    expect(checkAnalysisSettings({ data_schema: schema }, 'script').dataSchema).toBe(schema);
  });

  it.each([
    [[], /must be an object/],
    [{ data_schema: { type: 'array' } }, /type.*object/],
    [{ data_schema: { type: 'object', properties: { a: { type: 'texte' } } } }, /not a valid JSON Schema/],
    [{ summary: 'yes' }, /true or false/],
    [{ success_rubric: '' }, /success_rubric/],
    [{ rubric: 'x' }, /rubric is not a setting/],
  ])('refuses %j', (raw, why) => {
    expect(() => checkAnalysisSettings(raw, 'llm')).toThrow(why);
  });

  it('refuses a summary or rubric on a script agent', () => {
    expect(() => checkAnalysisSettings({ summary: true }, 'script')).toThrow(/llm brain/);
  });

  it('makes a schema of the extraction fields: each nullable, all required', () => {
    expect(
      extractionFieldsSchema([{ name: 'confirmed', type: 'boolean', description: 'Did they confirm?' }]),
    ).toEqual({
      type: 'object',
      properties: { confirmed: { type: ['boolean', 'null'], description: 'Did they confirm?' } },
      required: ['confirmed'],
      additionalProperties: false,
    });
  });
});
