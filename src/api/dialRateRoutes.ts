import type { FastifyInstance } from 'fastify';
import { callingWindowProblem, isTimeZone } from '../domain/callingWindow.js';
import { AppError } from '../domain/errors.js';
import { isPlainObject } from '../domain/outboundCallRequest.js';
import { isE164 } from '../domain/phone.js';
import {
  type DialRate,
  type DialRateScope,
  dialRateScopes,
  type QuietHoursRule,
  type Store,
} from '../store/types.js';
import { authOf } from './auth.js';
import { readJsonBody } from './jsonBody.js';
import { errorResponses } from './schemas.js';

export const callsPerSecondMax = 100;
const tags = ['calls'];
const rateSchema = {
  type: 'object',
  required: ['scope', 'subject', 'calls_per_second'],
  properties: {
    scope: { type: 'string', enum: [...dialRateScopes] },
    subject: {
      type: 'string',
      description: 'The caller ID (E.164) or the trunk name',
      examples: ['+15550009999'],
    },
    calls_per_second: { type: ['integer', 'null'], minimum: 1, maximum: callsPerSecondMax },
  },
} as const;

const describe = (rate: DialRate) => ({
  scope: rate.scope,
  subject: rate.subject,
  calls_per_second: rate.callsPerSecond,
});

/** Caps on how fast calls leave a caller ID or a trunk, for every call of the account. */
export function registerDialRateRoutes(app: FastifyInstance, store: Store): void {
  app.get(
    '/dial-rates',
    {
      schema: {
        summary: 'The caps on calls per second by caller ID and by trunk (extension)',
        operationId: 'listDialRates',
        tags,
        response: {
          200: {
            type: 'object',
            required: ['data'],
            properties: { data: { type: 'array', items: rateSchema } },
          },
          ...errorResponses(401, 429, 500),
        },
      },
    },
    async (request) => ({ data: (await store.dialRates.list(authOf(request).account.id)).map(describe) }),
  );

  app.put(
    '/dial-rates',
    {
      schema: {
        summary: 'Set or remove (null) the cap on calls per second of one caller ID or trunk (extension)',
        description:
          'Every call counts, single or campaign; a call over the cap waits in the queue. The buckets are shared by all worker processes.',
        operationId: 'setDialRate',
        tags,
        response: { 200: rateSchema, ...errorResponses(400, 401, 404, 422, 429, 500) },
      },
      config: { requestBody: rateSchema },
    },
    async (request) => {
      const accountId = authOf(request).account.id;
      const body = readJsonBody(request);
      if (
        !isPlainObject(body) ||
        Object.keys(body).some((key) => !['scope', 'subject', 'calls_per_second'].includes(key))
      )
        throw new AppError('validation_error', 'the body is {"scope", "subject", "calls_per_second"}');
      const { scope, subject, calls_per_second: perSecond } = body;
      if (!(dialRateScopes as readonly unknown[]).includes(scope))
        throw new AppError('validation_error', `scope must be one of ${dialRateScopes.join(', ')}`);
      if (typeof subject !== 'string' || subject.length === 0 || subject.length > 100)
        throw new AppError('validation_error', 'subject must be the caller ID or the trunk name');
      if (
        perSecond !== null &&
        (!Number.isInteger(perSecond) ||
          (perSecond as number) < 1 ||
          (perSecond as number) > callsPerSecondMax)
      )
        throw new AppError(
          'validation_error',
          `calls_per_second must be a whole number from 1 to ${callsPerSecondMax}, or null`,
        );
      if (scope === 'caller_id') {
        if (!isE164(subject)) throw new AppError('invalid_phone', 'subject must be an E.164 phone number');
        if (!(await store.numbers.get(accountId, subject)))
          throw new AppError('not_found', 'no such number in this account');
      } else if (!(await store.trunks.get(accountId, subject))) {
        throw new AppError('not_found', 'no such trunk in this account');
      }
      const rate = { scope: scope as DialRateScope, subject, callsPerSecond: perSecond as number | null };
      await store.dialRates.set(accountId, rate);
      request.log.info({ scope, callsPerSecond: perSecond }, 'dial rate set');
      return { scope: rate.scope, subject, calls_per_second: rate.callsPerSecond };
    },
  );

  const quietSchema = {
    type: 'object',
    required: ['quiet_hours'],
    properties: {
      quiet_hours: {
        type: ['object', 'null'],
        required: ['start', 'end', 'time_zone'],
        description:
          "No call starts from start to end, local to the callee (the number's zone, else time_zone); null: none",
        properties: {
          start: { type: 'string', examples: ['21:00'] },
          end: { type: 'string', examples: ['08:00'] },
          time_zone: { type: 'string', examples: ['America/New_York'] },
        },
      },
    },
  } as const;
  const describeQuiet = (rule: QuietHoursRule | null) => ({
    quiet_hours: rule ? { start: rule.start, end: rule.end, time_zone: rule.timeZone } : null,
  });

  app.get(
    '/quiet-hours',
    {
      schema: {
        summary: "The account's quiet hours (extension)",
        operationId: 'getQuietHours',
        tags,
        response: { 200: quietSchema, ...errorResponses(401, 429, 500) },
      },
    },
    async (request) => describeQuiet(await store.dialRates.quietHours(authOf(request).account.id)),
  );

  app.put(
    '/quiet-hours',
    {
      schema: {
        summary: 'Set or remove (null) the quiet hours of every call of the account (extension)',
        description:
          'A call asked for during them is accepted as usual and stays queued until they end in the callee zone. They override the deployment default (CALLWRIGHT_QUIET_HOURS).',
        operationId: 'setQuietHours',
        tags,
        response: { 200: quietSchema, ...errorResponses(400, 401, 429, 500) },
      },
      config: { requestBody: quietSchema },
    },
    async (request) => {
      const accountId = authOf(request).account.id;
      const body = readJsonBody(request);
      const value = isPlainObject(body) ? body.quiet_hours : undefined;
      const fail = () => {
        throw new AppError(
          'validation_error',
          'the body is {"quiet_hours": {"start": "21:00", "end": "08:00", "time_zone": "America/New_York"}} or {"quiet_hours": null}',
        );
      };
      if (!isPlainObject(body) || Object.keys(body).length !== 1 || value === undefined) fail();
      let rule: QuietHoursRule | null = null;
      if (value !== null) {
        if (
          !isPlainObject(value) ||
          Object.keys(value).some((key) => !['start', 'end', 'time_zone'].includes(key))
        )
          fail();
        const { start, end, time_zone: timeZone } = value as Record<string, unknown>;
        const problem = callingWindowProblem({ start: end, end: start });
        if (problem)
          throw new AppError(
            'validation_error',
            `quiet_hours: start and end must be local times HH:MM that differ`,
          );
        if (!isTimeZone(timeZone))
          throw new AppError('validation_error', 'quiet_hours.time_zone must be an IANA time zone');
        rule = { start: start as string, end: end as string, timeZone };
      }
      await store.dialRates.setQuietHours(accountId, rule);
      request.log.info({ quietHours: rule ? `${rule.start}-${rule.end}` : null }, 'quiet hours set');
      return describeQuiet(rule);
    },
  );
}
