import { createApiKey } from '../../src/admin/apiKeys.js';
import {
  type FakeOpenAiScript,
  type FakeOpenAiServer,
  startFakeOpenAiServer,
} from '../../src/voice/providers/testing/fakeOpenAiServer.js';
import { startFullService } from './fullService.js';

/**
 * The whole service with its OpenAI-compatible vendor faked (service-wide keys pointing at the
 * fake), and one account with an API key: what the tests of llm agents start from.
 */
export async function startLlmTestService(
  script: Partial<FakeOpenAiScript>,
  env: Record<string, string> = {},
): Promise<{
  fake: FakeOpenAiServer;
  service: Awaited<ReturnType<typeof startFullService>>;
  accountId: string;
  key: string;
  dispose(): Promise<void>;
}> {
  const fake = await startFakeOpenAiServer({ apiKey: 'sk-test', chatJsonContent: '{}', ...script });
  const service = await startFullService({
    CALLWRIGHT_OPENAI_BASE_URL: fake.baseUrl,
    CALLWRIGHT_OPENAI_API_KEY: 'sk-test',
    ...env,
  });
  const account = await service.store.accounts.create({ name: 'llm agents' });
  const { key } = await createApiKey(service.store, account.id, 'llm agents');
  return {
    fake,
    service,
    accountId: account.id,
    key,
    async dispose() {
      await service.dispose();
      await fake.close();
    },
  };
}
