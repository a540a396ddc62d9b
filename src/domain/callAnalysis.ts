import { checkObjectSchema } from './jsonSchema.js';
import type { ExtractionField } from './records.js';
import { flag, isObject, onlyKnownFields, refuse } from './settingsParsing.js';

/**
 * Post-call analysis (`settings.analysis`): what callwright works out of a call once it is over.
 *
 * ```json
 * { "analysis": {
 *     "data_schema": { "type": "object",
 *                      "properties": { "outcome": { "type": "string", "enum": ["confirmed", "rescheduled", "declined"] },
 *                                      "new_day": { "type": ["string", "null"] } },
 *                      "required": ["outcome"] },
 *     "summary": true,
 *     "success_rubric": "The callee confirmed or moved the appointment." } }
 * ```
 *
 * `data_schema` types `extracted_data` (without it, the agent's `extraction` fields make one);
 * the answer is checked against it before it is sent. `summary` and `success_rubric` ask the
 * language model for a short summary and a pass/fail judgement. A call whose callee never spoke is
 * not analysed (`skipped`), and a failed analysis says so with its reason instead of empty answers.
 */

export interface AnalysisSettings {
  /** A JSON Schema of type object for `extracted_data`; null: the one the extraction fields make. */
  dataSchema: Record<string, unknown> | null;
  summary: boolean;
  successRubric: string | null;
}

export const analysisStatuses = ['completed', 'failed', 'skipped'] as const;
export type AnalysisStatus = (typeof analysisStatuses)[number];

/** The analysis of an answered call, as the call record and `call.completed` carry it. */
export interface CallAnalysis {
  status: AnalysisStatus;
  /** Why it failed or was skipped; null when completed. */
  reason: string | null;
  summary: string | null;
  success: { passed: boolean; explanation: string } | null;
}

export const analysisLimits = {
  dataSchemaMaxBytes: 16_384,
  rubricMaxChars: 2_000,
  /** Longer summaries and explanations are cut. */
  summaryMaxChars: 2_000,
} as const;

export const noAnalysisSettings: AnalysisSettings = { dataSchema: null, summary: false, successRubric: null };

/** Checks `settings.analysis`; throws a 400 naming the first field that does not fit. */
export function checkAnalysisSettings(raw: unknown, brain?: 'script' | 'llm'): AnalysisSettings {
  if (raw === undefined) return noAnalysisSettings;
  if (!isObject(raw)) refuse('settings.analysis must be an object');
  onlyKnownFields('settings.analysis', raw, ['data_schema', 'summary', 'success_rubric']);
  const { data_schema: dataSchema, summary, success_rubric: rubric } = raw;
  if (dataSchema !== undefined)
    checkObjectSchema('settings.analysis.data_schema', dataSchema, analysisLimits.dataSchemaMaxBytes);
  const wantsSummary = flag('settings.analysis.summary', summary, false);
  if (
    rubric !== undefined &&
    (typeof rubric !== 'string' || rubric.trim() === '' || rubric.length > analysisLimits.rubricMaxChars)
  )
    refuse(
      `settings.analysis.success_rubric must be a text of 1 to ${analysisLimits.rubricMaxChars} characters`,
    );
  if (brain === 'script' && (wantsSummary || rubric !== undefined))
    refuse(
      'settings.analysis: a summary and a success rubric are written by a language model (the llm brain)',
    );
  return {
    dataSchema: (dataSchema as Record<string, unknown> | undefined) ?? null,
    summary: wantsSummary,
    successRubric: (rubric as string | undefined) ?? null,
  };
}

const jsonTypeOf: Record<ExtractionField['type'], Record<string, unknown>> = {
  string: { type: ['string', 'null'] },
  number: { type: ['number', 'null'] },
  boolean: { type: ['boolean', 'null'] },
  date: { type: ['string', 'null'], description: 'ISO 8601 date' },
};

/** The schema the agent's extraction fields make: each field nullable, all present. */
export function extractionFieldsSchema(fields: readonly ExtractionField[]): Record<string, unknown> {
  return {
    type: 'object',
    properties: Object.fromEntries(
      fields.map((field) => [field.name, { ...jsonTypeOf[field.type], description: field.description }]),
    ),
    required: fields.map((field) => field.name),
    additionalProperties: false,
  };
}

/** Cuts a model-written text to `max` characters. */
export function cutText(text: string, max: number = analysisLimits.summaryMaxChars): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
