import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, parseVariableDeclaration } from '../../src/admin/agents.js';
import { isAppError } from '../../src/domain/errors.js';
import type { AgentVariable } from '../../src/domain/records.js';
import { postCall } from '../helpers/http.js';
import {
  type AccountFixture,
  createAccountFixture,
  startTestService,
  type TestService,
} from '../helpers/service.js';
import { storeKinds } from '../helpers/stores.js';

/**
 * Issue 13, item 7: an agent marks a declared variable required and gives it a type; a call that
 * leaves out a required variable, or sends a value of another type, gets 400 naming it — on the
 * generic path and on PostgreSQL's one-statement create.
 */

describe.each(storeKinds)('on the %s store', (kind) => {
  let service: TestService;
  let account: AccountFixture;
  let typedAgentId: string;

  beforeAll(async () => {
    service = await startTestService({ store: kind });
    account = await createAccountFixture(service.store);
    typedAgentId = (
      await createAgent(service.store, account.accountId, {
        name: 'Typed',
        prompt: 'p',
        firstMessage: 'Hello {{customer_name}}, a table for {{party_size}}?',
        variables: ['customer_name!', 'party_size:number!=2', 'vip:boolean', 'note:string'].map(
          parseVariableDeclaration,
        ),
      })
    ).id;
  });

  afterAll(async () => {
    await service.close();
  });

  const call = (variables: Record<string, unknown> | undefined, agentId = typedAgentId) =>
    postCall(service.url, account.key, {
      agent_id: agentId,
      from_number: account.number,
      to_number: '+15550100001',
      ...(variables === undefined ? {} : { variables }),
    });

  function expectRefusal(result: { status: number; body: unknown }, message: string): void {
    expect(result.status).toBe(400);
    expect(result.body).toEqual({ error: { code: 'validation_error', message } });
  }

  it('a required variable without a default must be given', async () => {
    expectRefusal(await call(undefined), 'variables.customer_name is required by the agent');
    expectRefusal(await call({ vip: true }), 'variables.customer_name is required by the agent');
  });

  it('a required variable with a default may be left out (the default is a value)', async () => {
    const result = await call({ customer_name: 'Ann' });
    expect(result.status).toBe(200);
  });

  it('values are checked against the declared type', async () => {
    expectRefusal(
      await call({ customer_name: 'Ann', party_size: 'four' }),
      'variables.party_size must be a number',
    );
    expectRefusal(await call({ customer_name: 'Ann', vip: 'yes' }), 'variables.vip must be a boolean');
    expectRefusal(await call({ customer_name: 'Ann', note: 7 }), 'variables.note must be a string');
    expect((await call({ customer_name: 'Ann', party_size: 4, vip: false, note: 'window' })).status).toBe(
      200,
    );
  });

  it('an untyped (any) variable takes a string, number or boolean', async () => {
    for (const value of ['Ann', 42, true]) expect((await call({ customer_name: value })).status).toBe(200);
  });

  it('an undeclared name is named first, before types and required variables', async () => {
    expectRefusal(await call({ other: 1, party_size: 'x' }), 'variables.other is not declared by the agent');
    expectRefusal(await call({ party_size: 'x' }), 'variables.party_size must be a number');
  });

  it('an agent that could never speak is refused at creation, saying what to add', async () => {
    const silent = createAgent(service.store, account.accountId, { name: 'Mute', prompt: 'Remind them.' });
    await expect(silent).rejects.toMatchObject({
      code: 'validation_error',
      message:
        'this agent would never speak: give it a script (--script FILE), a first message (--first-message), or an LLM (--brain llm)',
    });
    const blank = createAgent(service.store, account.accountId, {
      name: 'Mute',
      prompt: 'p',
      firstMessage: '  ',
    });
    await expect(blank).rejects.toMatchObject({ code: 'validation_error' });
    const greeting = await createAgent(service.store, account.accountId, {
      name: 'Greets',
      prompt: 'p',
      firstMessage: 'Hi!',
    });
    expect(greeting.script).toBeNull();
  });

  it('an agent stored before variables had a type and a required flag reads as untyped and optional', async () => {
    const stored = await service.store.agents.get(account.accountId, typedAgentId);
    const legacy = await service.store.agents.create({
      ...stored!,
      variables: [{ name: 'customer_name', default: null, description: '' } as AgentVariable],
    });
    expect(legacy.variables).toEqual([
      { name: 'customer_name', default: null, description: '', required: false, type: 'any' },
    ]);
    const reread = await service.store.agents.get(account.accountId, legacy.id);
    expect(reread?.variables[0]).toMatchObject({ required: false, type: 'any' });
    expect((await call(undefined, legacy.id)).status).toBe(200);
    expect((await call({ customer_name: 3 }, legacy.id)).status).toBe(200);
  });
});

describe('agent declarations', () => {
  it('parse NAME[:TYPE][!][=DEFAULT]', () => {
    expect(parseVariableDeclaration('customer_name')).toEqual({
      name: 'customer_name',
      default: null,
      description: '',
      required: false,
      type: 'any',
    });
    expect(parseVariableDeclaration('party_size:number!=2')).toMatchObject({
      name: 'party_size',
      default: '2',
      required: true,
      type: 'number',
    });
    expect(parseVariableDeclaration('greeting=a=b')).toMatchObject({ default: 'a=b', required: false });
    expect(parseVariableDeclaration('vip:boolean!')).toMatchObject({ required: true, type: 'boolean' });
  });

  it('refuse an unknown type and a default that is not of the type', () => {
    const message = (spec: string) => {
      try {
        parseVariableDeclaration(spec);
        return 'accepted';
      } catch (error) {
        return isAppError(error) ? error.message : String(error);
      }
    };
    expect(message('size:integer')).toMatch(/size: the type must be one of any, string, number, boolean/);
    expect(message('size:number=many')).toBe('variable size: the default "many" is not a number');
    expect(message('vip:boolean=yes')).toBe('variable vip: the default "yes" is not a boolean');
    expect(message('a:number:x')).toMatch(/the type must be one of/);
  });
});
