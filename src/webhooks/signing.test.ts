import { describe, expect, it } from 'vitest';
import { AppError } from '../domain/errors.js';
import { generateWebhookSecret, signPayload, webhookHeaders, webhookSecretProblem } from './signing.js';

// Published Standard Webhooks test vector ("sign function works" in the libraries' tests of
// github.com/standard-webhooks/standard-webhooks, e.g. libraries/python/tests/test_webhooks.py).
const vector = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestampS: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

function expectValidationError(action: () => unknown, messagePart: string): void {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('validation_error');
    expect((error as AppError).message).toContain(messagePart);
    return;
  }
  expect.fail('expected an AppError');
}

describe('signPayload', () => {
  it('reproduces the Standard Webhooks test vector', () => {
    const signature = signPayload({
      secrets: [vector.secret],
      id: vector.id,
      timestampS: vector.timestampS,
      body: vector.body,
    });
    expect(signature).toBe(vector.signature);
  });

  it('signs a Buffer body exactly like the same bytes as a string', () => {
    const signature = signPayload({
      secrets: [vector.secret],
      id: vector.id,
      timestampS: vector.timestampS,
      body: Buffer.from(vector.body, 'utf8'),
    });
    expect(signature).toBe(vector.signature);
  });

  it('signs the exact bytes: a different body, id or timestamp changes the signature', () => {
    const base = {
      secrets: [vector.secret],
      id: vector.id,
      timestampS: vector.timestampS,
      body: vector.body,
    };
    expect(signPayload({ ...base, body: '{"test":2432232314}' })).not.toBe(vector.signature);
    expect(signPayload({ ...base, id: 'msg_other' })).not.toBe(vector.signature);
    expect(signPayload({ ...base, timestampS: vector.timestampS + 1 })).not.toBe(vector.signature);
  });

  it('gives one space-separated signature per active secret, in order (rotation)', () => {
    const newSecret = generateWebhookSecret();
    const input = { id: vector.id, timestampS: vector.timestampS, body: vector.body };
    const both = signPayload({ ...input, secrets: [vector.secret, newSecret] });
    const onlyNew = signPayload({ ...input, secrets: [newSecret] });
    expect(both.split(' ')).toEqual([vector.signature, onlyNew]);
  });

  it('refuses unusable input with a validation error', () => {
    const input = { id: vector.id, timestampS: vector.timestampS, body: vector.body };
    expectValidationError(() => signPayload({ ...input, secrets: [] }), 'at least one webhook secret');
    expectValidationError(
      () => signPayload({ ...input, secrets: ['MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] }),
      'must start with "whsec_"',
    );
    expectValidationError(() => signPayload({ ...input, secrets: ['whsec_not base64!'] }), 'base64');
    expectValidationError(() => signPayload({ ...input, secrets: ['whsec_c2hvcnQ='] }), 'got 5');
    expectValidationError(() => signPayload({ ...input, secrets: [vector.secret], id: 'a.b' }), 'webhook id');
    expectValidationError(() => signPayload({ ...input, secrets: [vector.secret], id: '' }), 'webhook id');
    expectValidationError(
      () => signPayload({ ...input, secrets: [vector.secret], timestampS: 1614265330.5 }),
      'whole unix seconds',
    );
    expectValidationError(
      () => signPayload({ ...input, secrets: [vector.secret], timestampS: -1 }),
      'unix seconds',
    );
  });
});

describe('generateWebhookSecret', () => {
  it('is whsec_ and the base64 of 32 random bytes', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(webhookSecretProblem(secret)).toBeNull();
  });

  it('differs every time', () => {
    const secrets = new Set(Array.from({ length: 50 }, () => generateWebhookSecret()));
    expect(secrets.size).toBe(50);
  });
});

describe('webhookHeaders', () => {
  it('carries id, timestamp, signature and the JSON content type', () => {
    const headers = webhookHeaders({
      secrets: [vector.secret],
      id: vector.id,
      timestampS: vector.timestampS,
      body: vector.body,
    });
    expect(headers).toEqual({
      'webhook-id': vector.id,
      'webhook-timestamp': '1614265330',
      'webhook-signature': vector.signature,
      'content-type': 'application/json',
    });
  });
});
