import fc from 'fast-check';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, signPayload, webhookHeaders } from './signing.js';
import { verifyWebhook, WebhookVerificationError } from './verify.js';

// Published Standard Webhooks test vectors (github.com/standard-webhooks/standard-webhooks,
// libraries/*/tests: DEFAULT_SECRET, DEFAULT_MSG_ID, DEFAULT_PAYLOAD and the "sign function works" case).
const vector = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  secretWithoutPrefix: 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestampS: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  // The libraries' "invalid signature" cases: the valid one with its last characters changed.
  wrongSignature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA=',
  // The libraries' "multi sig payload" decoys.
  decoyV1: 'v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=',
  decoyV2: 'v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=',
};

const vectorHeaders = {
  'webhook-id': vector.id,
  'webhook-timestamp': String(vector.timestampS),
  'webhook-signature': vector.signature,
};
const atVectorTime = { nowS: vector.timestampS };

function verificationFailure(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return (error as Error).message;
  }
  return expect.fail('expected a WebhookVerificationError');
}

describe('verifyWebhook against the Standard Webhooks test vectors', () => {
  it('accepts the published signature and returns the parsed payload', () => {
    expect(verifyWebhook(vector.secret, vectorHeaders, vector.body, atVectorTime)).toEqual({
      test: 2432232314,
    });
  });

  it('accepts the secret with or without the whsec_ prefix', () => {
    expect(verifyWebhook(vector.secretWithoutPrefix, vectorHeaders, vector.body, atVectorTime)).toEqual({
      test: 2432232314,
    });
  });

  it('refuses the altered signature', () => {
    const headers = { ...vectorHeaders, 'webhook-signature': vector.wrongSignature };
    expect(verificationFailure(() => verifyWebhook(vector.secret, headers, vector.body, atVectorTime))).toBe(
      'no webhook signature matches',
    );
  });

  it('accepts a header with decoys and an unknown version around the valid signature', () => {
    const signatures = [vector.decoyV1, vector.decoyV2, vector.signature, vector.decoyV1].join(' ');
    const headers = { ...vectorHeaders, 'webhook-signature': signatures };
    expect(verifyWebhook(vector.secret, headers, vector.body, atVectorTime)).toEqual({ test: 2432232314 });
  });

  it('refuses truncated signatures', () => {
    for (const signature of [vector.signature.slice(0, 8), 'v1,', 'v1']) {
      const headers = { ...vectorHeaders, 'webhook-signature': signature };
      verificationFailure(() => verifyWebhook(vector.secret, headers, vector.body, atVectorTime));
    }
  });

  it('ignores versions other than v1', () => {
    const headers = { ...vectorHeaders, 'webhook-signature': vector.signature.replace('v1,', 'v2,') };
    expect(verificationFailure(() => verifyWebhook(vector.secret, headers, vector.body, atVectorTime))).toBe(
      'webhook-signature header has no v1 signature',
    );
  });

  it('names a missing header', () => {
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
      const headers: Record<string, string> = { ...vectorHeaders };
      delete headers[name];
      expect(
        verificationFailure(() => verifyWebhook(vector.secret, headers, vector.body, atVectorTime)),
      ).toBe(`missing ${name} header`);
    }
  });

  it('refuses a timestamp that is not unix seconds', () => {
    for (const timestamp of ['hello', '1614265330.0', '-1614265330', '1e9']) {
      const headers = { ...vectorHeaders, 'webhook-timestamp': timestamp };
      expect(
        verificationFailure(() => verifyWebhook(vector.secret, headers, vector.body, atVectorTime)),
      ).toContain('invalid webhook-timestamp header');
    }
  });
});

describe('verifyWebhook tolerance', () => {
  it('accepts up to 300 s either way by default and refuses beyond', () => {
    const at = (nowS: number) => () => verifyWebhook(vector.secret, vectorHeaders, vector.body, { nowS });
    expect(at(vector.timestampS + 300)()).toEqual({ test: 2432232314 });
    expect(at(vector.timestampS - 300)()).toEqual({ test: 2432232314 });
    expect(verificationFailure(at(vector.timestampS + 301))).toBe(
      'webhook timestamp is too old: 301 s before now, tolerance is 300 s',
    );
    expect(verificationFailure(at(vector.timestampS - 301))).toBe(
      'webhook timestamp is too new: 301 s after now, tolerance is 300 s',
    );
  });

  it('takes another tolerance', () => {
    const options = { nowS: vector.timestampS + 11, toleranceS: 10 };
    verificationFailure(() => verifyWebhook(vector.secret, vectorHeaders, vector.body, options));
    expect(verifyWebhook(vector.secret, vectorHeaders, vector.body, { ...options, toleranceS: 11 })).toEqual({
      test: 2432232314,
    });
  });

  it('uses the clock when no time is given', () => {
    verificationFailure(() => verifyWebhook(vector.secret, vectorHeaders, vector.body));
    const timestampS = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders({
      secrets: [vector.secret],
      id: vector.id,
      timestampS,
      body: vector.body,
    });
    expect(verifyWebhook(vector.secret, headers, vector.body)).toEqual({ test: 2432232314 });
  });
});

describe('verifyWebhook headers', () => {
  it('accepts any header-name casing in a plain object', () => {
    const headers = {
      'Webhook-Id': vector.id,
      'WEBHOOK-TIMESTAMP': String(vector.timestampS),
      'webhook-Signature': vector.signature,
    };
    expect(verifyWebhook(vector.secret, headers, vector.body, atVectorTime)).toEqual({ test: 2432232314 });
  });

  it('accepts a Fetch API Headers', () => {
    const headers = new Headers(vectorHeaders);
    expect(verifyWebhook(vector.secret, headers, vector.body, atVectorTime)).toEqual({ test: 2432232314 });
  });

  it('accepts Node-style array values and refuses conflicting duplicates', () => {
    const arrayHeaders = { ...vectorHeaders, 'webhook-id': [vector.id] };
    expect(verifyWebhook(vector.secret, arrayHeaders, vector.body, atVectorTime)).toEqual({
      test: 2432232314,
    });
    const conflicting = { ...vectorHeaders, 'Webhook-Id': 'msg_other' };
    expect(
      verificationFailure(() => verifyWebhook(vector.secret, conflicting, vector.body, atVectorTime)),
    ).toBe('more than one webhook-id header');
  });
});

describe('verifyWebhook tampering and rotation', () => {
  const nowS = 1_700_000_000;
  const secret = generateWebhookSecret();
  const body = '{"type":"call.completed","id":"evt_1","data":{"call_id":"call_1"}}';
  const headers = webhookHeaders({ secrets: [secret], id: 'evt_1', timestampS: nowS, body });

  it('accepts the untouched webhook', () => {
    expect(verifyWebhook(secret, headers, body, { nowS })).toMatchObject({ id: 'evt_1' });
  });

  it('refuses a tampered body, id or timestamp', () => {
    const tamperedBody = body.replace('call_1', 'call_2');
    verificationFailure(() => verifyWebhook(secret, headers, tamperedBody, { nowS }));
    verificationFailure(() => verifyWebhook(secret, { ...headers, 'webhook-id': 'evt_2' }, body, { nowS }));
    const laterTimestamp = { ...headers, 'webhook-timestamp': String(nowS + 1) };
    verificationFailure(() => verifyWebhook(secret, laterTimestamp, body, { nowS }));
  });

  it('refuses another secret', () => {
    verificationFailure(() => verifyWebhook(generateWebhookSecret(), headers, body, { nowS }));
  });

  it('verifies with either secret while two are active', () => {
    const [oldSecret, newSecret] = [generateWebhookSecret(), generateWebhookSecret()];
    const rotating = webhookHeaders({ secrets: [oldSecret, newSecret], id: 'evt_1', timestampS: nowS, body });
    expect(rotating['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifyWebhook(oldSecret, rotating, body, { nowS })).toMatchObject({ id: 'evt_1' });
    expect(verifyWebhook(newSecret, rotating, body, { nowS })).toMatchObject({ id: 'evt_1' });
    expect(verifyWebhook([generateWebhookSecret(), newSecret], rotating, body, { nowS })).toMatchObject({
      id: 'evt_1',
    });
    verificationFailure(() => verifyWebhook(generateWebhookSecret(), rotating, body, { nowS }));
  });

  it('verifies the exact bytes of a Buffer body, including non-ASCII text', () => {
    const bytes = Buffer.from('{"text":"Grüße, 👋"}', 'utf8');
    const signed = webhookHeaders({ secrets: [secret], id: 'evt_2', timestampS: nowS, body: bytes });
    expect(verifyWebhook(secret, signed, bytes, { nowS })).toEqual({ text: 'Grüße, 👋' });
    expect(verifyWebhook(secret, signed, new Uint8Array(bytes), { nowS })).toEqual({ text: 'Grüße, 👋' });
    verificationFailure(() => verifyWebhook(secret, signed, Buffer.from('{"text":"Grusse, 👋"}'), { nowS }));
  });

  it('refuses a correctly signed body that is not JSON', () => {
    const signed = webhookHeaders({ secrets: [secret], id: 'evt_3', timestampS: nowS, body: 'not json' });
    expect(verificationFailure(() => verifyWebhook(secret, signed, 'not json', { nowS }))).toBe(
      'webhook body is not valid JSON',
    );
  });

  it('treats an unusable secret as a programming error, not a verification failure', () => {
    expect(() => verifyWebhook('whsec_', headers, body, { nowS })).toThrow(TypeError);
    expect(() => verifyWebhook('whsec_%%%%', headers, body, { nowS })).toThrow(TypeError);
    expect(() => verifyWebhook([], headers, body, { nowS })).toThrow(TypeError);
  });
});

describe('cross-check with the standardwebhooks package', () => {
  const messageIdArbitrary = fc.stringMatching(/^msg_[A-Za-z0-9]{1,30}$/);
  const bodyArbitrary = fc.jsonValue().map((value) => JSON.stringify({ value }));

  it('their verifier accepts what we sign', () => {
    fc.assert(
      fc.property(messageIdArbitrary, bodyArbitrary, (id, body) => {
        const secret = generateWebhookSecret();
        const timestampS = Math.floor(Date.now() / 1000);
        const headers = webhookHeaders({ secrets: [secret], id, timestampS, body });
        expect(new StandardWebhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
      }),
      { numRuns: 100 },
    );
  });

  it('their verifier accepts each signature of a rotation and refuses a tampered body', () => {
    const [oldSecret, newSecret] = [generateWebhookSecret(), generateWebhookSecret()];
    const body = '{"type":"call.completed"}';
    const timestampS = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders({ secrets: [oldSecret, newSecret], id: 'evt_1', timestampS, body });
    expect(new StandardWebhook(oldSecret).verify(body, headers)).toEqual({ type: 'call.completed' });
    expect(new StandardWebhook(newSecret).verify(body, headers)).toEqual({ type: 'call.completed' });
    expect(() => new StandardWebhook(newSecret).verify('{"type":"call.failed"}', headers)).toThrow();
  });

  it('we verify what they sign', () => {
    fc.assert(
      fc.property(
        messageIdArbitrary,
        bodyArbitrary,
        fc.integer({ min: 0, max: 2 ** 32 }),
        (id, body, timestampS) => {
          const secret = generateWebhookSecret();
          const signature = new StandardWebhook(secret).sign(id, new Date(timestampS * 1000), body);
          const headers = {
            'webhook-id': id,
            'webhook-timestamp': String(timestampS),
            'webhook-signature': signature,
          };
          expect(verifyWebhook(secret, headers, body, { nowS: timestampS })).toEqual(JSON.parse(body));
          expect(signPayload({ secrets: [secret], id, timestampS, body })).toBe(signature);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('their signer reproduces the published vector too', () => {
    const signature = new StandardWebhook(vector.secret).sign(
      vector.id,
      new Date(vector.timestampS * 1000),
      vector.body,
    );
    expect(signature).toBe(vector.signature);
  });
});
