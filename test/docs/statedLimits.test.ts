import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRecordingLinks, recordingLinkKeyName } from '../../src/api/recordingLinks.js';
import { loadSecretBox } from '../../src/secrets/secretBox.js';
import { openServiceSecret } from '../../src/secrets/secretsAtRest.js';
import { maxToolRoundsPerReply } from '../../src/voice/brains/llmBrain.js';
import { callFixture, startFullService, waitForTerminal } from '../helpers/fullService.js';
import { jsonApi } from '../helpers/http.js';

/**
 * Issue 34, finding 9 (the docs half): docs/agents.md said the model may call tools 4 times in a
 * reply while the code allows 3 rounds; docs/api.md said 403 never occurs on /v1 while an expired
 * recording link answers 403. The numbers and statuses the docs state are checked against the
 * code and a running service here.
 */

const root = new URL('../../', import.meta.url).pathname;
const agentsDoc = readFileSync(`${root}docs/agents.md`, 'utf8');
const apiDoc = readFileSync(`${root}docs/api.md`, 'utf8');

describe('what the docs state', () => {
  it('agents.md states the number of tool rounds the LLM brain allows in one reply', () => {
    const stated = /call your tools in up to (\d+)\s+rounds in a row/.exec(agentsDoc.replace(/\s+/g, ' '));
    // The last round offers only the built-in actions.
    expect(Number(stated?.[1])).toBe(maxToolRoundsPerReply - 1);
  });

  describe('recording links', () => {
    let service: Awaited<ReturnType<typeof startFullService>>;
    let fixture: Awaited<ReturnType<typeof callFixture>>;

    beforeAll(async () => {
      service = await startFullService();
      fixture = await callFixture(service, { maxDurationS: 2 });
    }, 60_000);

    afterAll(async () => {
      await service?.dispose();
    });

    it('an expired link answers 403 forbidden and a forged one 401, as api.md says', async () => {
      const api = jsonApi(
        () => service.url,
        () => fixture.key,
      );
      const placed = await api('/calls/outbound', {
        method: 'POST',
        body: { agent_id: fixture.agentId, from_number: fixture.from, to_number: '+15550100001' },
      });
      const call = await waitForTerminal(service, (placed.body as { call_id: string }).call_id);
      expect(call.recordingPath).not.toBeNull();
      const secretBox = loadSecretBox({ configuredKeyBase64: null, dataDir: service.dataDir });
      const links = createRecordingLinks({
        publicUrl: service.url,
        keyBase64: await openServiceSecret(service.store, secretBox, recordingLinkKeyName, () => {
          throw new Error('the service made its key at start');
        }),
      });
      const eightDaysAgoMs = Date.now() - 8 * 24 * 3600 * 1000;
      const expired = await fetch(links.urlFor(call, eightDaysAgoMs) as string);
      expect(expired.status).toBe(403);
      expect(await expired.json()).toEqual({
        error: { code: 'forbidden', message: 'the recording link has expired' },
      });
      const forged = await fetch(`${(links.urlFor(call) as string).slice(0, -4)}AAAA`);
      expect(forged.status).toBe(401);
      const fresh = await fetch(links.urlFor(call) as string);
      expect(fresh.status).toBe(200);

      const row403 = apiDoc.split('\n').find((line) => line.startsWith('| 403 |')) ?? '';
      expect(row403).toContain('recording link');
      expect(row403).toContain('expired');
      expect(row403).not.toContain('never on `/v1`');
    }, 60_000);
  });
});
