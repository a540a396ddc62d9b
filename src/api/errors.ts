import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode, errorStatusByCode, isAppError, type RowError } from '../domain/errors.js';

export interface ErrorBody {
  error: { code: ErrorCode; message: string; rows?: RowError[] };
}

export function errorBody(code: ErrorCode, message: string, rows?: RowError[]): ErrorBody {
  return { error: rows ? { code, message, rows } : { code, message } };
}

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply
    .code(error.status)
    .type('application/json')
    .send(errorBody(error.code, error.message, error.rows));
}

/** A body limit as people write it: 64 KiB, 64 MiB. */
function sizeText(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / 1024 / 1024} MiB` : `${Math.round(bytes / 1024)} KiB`;
}

/** Fastify's own 4xx errors, worded for a client; the body-size error is a 400 by DESIGN §1. */
function clientErrorFromFramework(error: FastifyError, bodyLimit: number | undefined): AppError {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError(
        'validation_error',
        `request body must be at most ${sizeText(bodyLimit ?? 64 * 1024)}`,
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('validation_error', 'request body length does not match Content-Length');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('validation_error', 'Content-Type must be application/json');
    default:
      if (error.validation) {
        const first = error.validation[0];
        const where = error.validationContext ?? 'request';
        const field = first?.instancePath ? first.instancePath.replace(/^\//, '').replace(/\//g, '.') : '';
        const missing = (first?.params as { missingProperty?: string } | undefined)?.missingProperty;
        const name = missing ?? field;
        return new AppError(
          'validation_error',
          `${where}${name ? `.${name}` : ''} ${first?.message ?? 'is invalid'}`.slice(0, 300),
        );
      }
      return new AppError('validation_error', 'invalid request');
  }
}

/** Every failure leaves as `{"error":{"code","message"}}`; nothing leaks a stack trace. */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply) => {
    if (isAppError(error)) return sendError(reply, error);
    const status = (error as FastifyError).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      return sendError(
        reply,
        clientErrorFromFramework(error as FastifyError, request.routeOptions?.bodyLimit),
      );
    }
    request.log.error({ err: error }, 'unexpected error');
    return sendError(reply, new AppError('server_error', 'internal server error'));
  });

  app.setNotFoundHandler((_request, reply) => {
    sendError(reply, new AppError('not_found', 'no such resource'));
  });
}

export const errorResponseSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: Object.keys(errorStatusByCode) },
        message: { type: 'string' },
      },
    },
  },
} as const;
