import {
  type AnalysisSettings,
  type CallAnalysis,
  cutText,
  extractionFieldsSchema,
} from '../domain/callAnalysis.js';
import { schemaProblems } from '../domain/jsonSchema.js';
import type { ExtractionField } from '../domain/records.js';
import type { Logger } from '../logger.js';
import type { AgentBrain, CallAnalysisResult } from './brains/types.js';
import type { OpenAiChatClient } from './providers/index.js';

/**
 * Post-call analysis: `extracted_data` (from the script, or a schema-constrained request to the
 * language model) checked against the agent's data schema, plus an optional summary and success
 * judgement. Never empty answers passed off as an analysis: a call in which the callee never spoke
 * or pressed a key is `skipped`, and a refusal, a failed request or data that does not fit the
 * schema is `failed` with its reason.
 */

type TranscriptLines = readonly { role: string; text: string; event?: string }[];

export const completedAnalysis = (
  parts: Partial<Pick<CallAnalysis, 'summary' | 'success'>> = {},
): CallAnalysis => ({
  status: 'completed',
  reason: null,
  summary: parts.summary ?? null,
  success: parts.success ?? null,
});

export const failedAnalysis = (reason: string): CallAnalysisResult => ({
  data: {},
  analysis: { status: 'failed', reason: cutText(reason, 300), summary: null, success: null },
});

/** The whole analysis of an answered call: skipped without the callee, failed on any error. */
export async function analyzeCall(
  brain: Pick<AgentBrain, 'analyze'>,
  transcript: TranscriptLines,
  logger: Logger,
): Promise<CallAnalysisResult> {
  if (!transcript.some((entry) => entry.role === 'callee'))
    return {
      data: {},
      analysis: { status: 'skipped', reason: 'the callee never spoke', summary: null, success: null },
    };
  try {
    return await brain.analyze(transcript);
  } catch (error) {
    logger.warn({ err: error }, 'the post-call analysis failed');
    return failedAnalysis(`the analysis failed: ${String((error as Error)?.message ?? error)}`);
  }
}

/** A script's filled fields, checked against the agent's data schema when it has one. */
export function scriptAnalysis(
  data: Record<string, unknown>,
  settings: AnalysisSettings,
): CallAnalysisResult {
  if (settings.dataSchema) {
    const problems = schemaProblems(settings.dataSchema, data);
    if (problems) return failedAnalysis(`the script's data does not fit the data schema: ${problems}`);
  }
  return { data, analysis: completedAnalysis() };
}

function conversationText(transcript: TranscriptLines): string {
  return transcript
    .map((entry) =>
      entry.event ? `${entry.role} (${entry.event}): ${entry.text}` : `${entry.role}: ${entry.text}`,
    )
    .join('\n');
}

const reviewSchema = (settings: AnalysisSettings): Record<string, unknown> => {
  const properties: Record<string, unknown> = {};
  if (settings.summary)
    properties.summary = {
      type: 'string',
      description: 'Two or three sentences: what happened on the call.',
    };
  if (settings.successRubric)
    properties.success = {
      type: 'object',
      properties: {
        passed: { type: 'boolean', description: 'Whether the call meets the rubric.' },
        explanation: { type: 'string', description: 'One sentence: why.' },
      },
      required: ['passed', 'explanation'],
      additionalProperties: false,
    };
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
};

/**
 * The language model's analysis: one schema-constrained request for the data (the agent's own
 * schema, or the one its extraction fields make) and, when asked for, one for the summary and the
 * success judgement against the rubric.
 */
export async function languageModelAnalysis(
  chat: OpenAiChatClient,
  settings: AnalysisSettings,
  extraction: readonly ExtractionField[],
  transcript: TranscriptLines,
): Promise<CallAnalysisResult> {
  const conversation = conversationText(transcript);
  let data: Record<string, unknown> = {};
  const schema = settings.dataSchema ?? (extraction.length > 0 ? extractionFieldsSchema(extraction) : null);
  if (schema) {
    const answer = await chat.completeJson({
      messages: [
        {
          role: 'system',
          content: 'Extract the requested fields from this phone call. Use null when unknown.',
        },
        { role: 'user', content: conversation },
      ],
      schema: { name: 'extracted_data', schema },
      // The fields' own schema fits OpenAI's strict mode; an agent's schema need not: it is checked here.
      strict: settings.dataSchema === null,
    });
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
      return failedAnalysis('the language model did not answer with an object');
    data = answer as Record<string, unknown>;
    if (!settings.dataSchema) {
      const known = new Set(extraction.map((field) => field.name));
      data = Object.fromEntries(Object.entries(data).filter(([name]) => known.has(name)));
    }
    const problems = schemaProblems(schema, data);
    if (problems)
      return failedAnalysis(`the language model's data does not fit the data schema: ${problems}`);
  }
  if (!settings.summary && !settings.successRubric) return { data, analysis: completedAnalysis() };
  const wantedReview = reviewSchema(settings);
  const review = await chat.completeJson({
    messages: [
      {
        role: 'system',
        content: [
          'You review a phone call an AI agent made.',
          settings.summary ? 'Summarise it briefly.' : '',
          settings.successRubric
            ? `Judge whether it succeeded by this rubric: ${settings.successRubric}`
            : '',
        ]
          .filter(Boolean)
          .join(' '),
      },
      { role: 'user', content: conversation },
    ],
    schema: { name: 'call_review', schema: wantedReview },
  });
  const problems = schemaProblems(wantedReview, review);
  if (problems)
    return { data, analysis: { ...failedAnalysis(`the review does not fit: ${problems}`).analysis } };
  const { summary, success } = review as {
    summary?: string;
    success?: { passed: boolean; explanation: string };
  };
  return {
    data,
    analysis: completedAnalysis({
      ...(summary !== undefined ? { summary: cutText(summary) } : {}),
      ...(success ? { success: { passed: success.passed, explanation: cutText(success.explanation) } } : {}),
    }),
  };
}
