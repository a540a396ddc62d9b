import type { FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { decodeUtf8OrNull } from '../domain/utf8.js';

export const maxBodyBytes = 64 * 1024;

/** The text of a body, or a 400 when its bytes are not UTF-8. */
function decodeUtf8Body(raw: Uint8Array): string {
  const text = decodeUtf8OrNull(raw);
  if (text === null) throw new AppError('validation_error', 'request body is not valid UTF-8');
  return text;
}

/**
 * DESIGN §1 step 3: Content-Type must be application/json (a UTF-8 charset parameter allowed)
 * and the body one JSON document. The body arrives as raw bytes (see app.ts) so that this check
 * runs after authentication and the rate limit, in the order the design fixes.
 */
export function readJsonBody(request: FastifyRequest): unknown {
  const contentType = request.headers['content-type'];
  if (typeof contentType !== 'string')
    throw new AppError('validation_error', 'Content-Type must be application/json');
  const [mediaType, ...parameters] = contentType.split(';');
  if (mediaType?.trim().toLowerCase() !== 'application/json') {
    throw new AppError('validation_error', 'Content-Type must be application/json');
  }
  for (const parameter of parameters) {
    const [name, value] = parameter.split('=');
    if (name?.trim().toLowerCase() === 'charset') {
      const charset = value?.trim().replace(/^"|"$/g, '').toLowerCase();
      if (charset !== 'utf-8' && charset !== 'utf8') {
        throw new AppError('validation_error', 'Content-Type charset must be utf-8');
      }
    }
  }
  const raw = request.body;
  if (!Buffer.isBuffer(raw) || raw.length === 0) {
    throw new AppError('validation_error', 'request body must be a JSON object');
  }
  const text = decodeUtf8Body(raw);
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError('validation_error', 'request body is not valid JSON');
  }
}
