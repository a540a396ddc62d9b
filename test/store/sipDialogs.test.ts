import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import type { SipDialogRecord } from '../../src/domain/records.js';
import {
  type AnyStore,
  createCallOwner,
  newQueuedCall,
  openTestStore,
  sqlOn,
  storeKinds,
  type TestStoreHandle,
} from '../helpers/stores.js';

/** The SIP dialog of an answered call is stored for a BYE from another process (issue 12, defect 10). */

const dialog: SipDialogRecord = {
  callId: 'c0ffee00c0ffee00c0ffee00c0ffee00',
  localTag: 'aaaa1111',
  remoteTag: 'bbbb2222',
  localAddress: '<sip:+15550000001@pbx.example.com>;tag=aaaa1111',
  remoteAddress: '<sip:+15550000002@pbx.example.com>;tag=bbbb2222',
  remoteTarget: 'sip:callee@93.184.215.14:5070',
  routeSet: ['<sip:93.184.215.1;lr>', '<sip:93.184.215.2;lr>'],
  localSeq: 2,
  destination: { host: '93.184.215.14', port: 5070 },
  trunkId: 'trk_0123',
};

describe.each(storeKinds)('SIP dialogs on %s', (kind) => {
  let handle: TestStoreHandle;
  let store: AnyStore;

  beforeEach(async () => {
    handle = await openTestStore(kind);
    store = handle.store;
  });

  afterEach(async () => {
    await handle.dispose();
  });

  async function queuedCall(): Promise<string> {
    const { owner } = await createCallOwner(store);
    const call = await store.calls.createQueued(newQueuedCall(owner));
    if (!call) throw new Error('not created');
    return call.id;
  }

  it('stores the dialog of a call and reads it back; none before, none for an unknown call', async () => {
    const callId = await queuedCall();
    expect(await store.calls.getSipDialog(callId)).toBeNull();
    await store.calls.setSipDialog(callId, dialog);
    expect(await store.calls.getSipDialog(callId)).toEqual(dialog);
    expect(await store.calls.getSipDialog(newId('call'))).toBeNull();
    // The call as the API reads it does not carry the dialog.
    expect(Object.keys((await store.calls.getById(callId)) ?? {})).not.toContain('sipDialog');
  });

  it('reads a damaged stored dialog as none', async () => {
    const callId = await queuedCall();
    const damaged = JSON.stringify({ ...dialog, destination: { host: 7 } });
    await sqlOn(
      store,
      `UPDATE calls SET sip_dialog = ?${kind === 'postgres' ? '::jsonb' : ''} WHERE id = ?`,
      [damaged, callId],
    );
    expect(await store.calls.getSipDialog(callId)).toBeNull();
  });
});
