import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { beepTone, speechLikeTone } from '../../telephony/sandbox/index.js';
import { BeepDetector } from '../beepDetector.js';
import { parseDialogScript } from './dialogScript.js';
import { ScriptBrain } from './scriptBrain.js';
import { SentenceSplitter } from './sentenceSplitter.js';
import type { BrainAction } from './types.js';

const example = parseDialogScript(
  JSON.parse(
    readFileSync(
      resolve(import.meta.dirname, '../../../examples/agents/appointment-confirmation.json'),
      'utf8',
    ),
  ),
);

async function all(actions: AsyncIterable<BrainAction>): Promise<BrainAction[]> {
  const collected: BrainAction[] = [];
  for await (const action of actions) collected.push(action);
  return collected;
}

const signal = new AbortController().signal;

describe('the script brain', () => {
  it('presses keys after a say (a phone menu) and hands over with transfer, going on at transfer_failed', async () => {
    const script = parseDialogScript({
      start: 'menu',
      nodes: {
        menu: { say: 'Getting you through.', send_dtmf: '2#', next: 'handoff' },
        handoff: { transfer: 'human', transfer_failed: 'sorry' },
        sorry: { say: 'Nobody is free.', end: true },
      },
    });
    const brain = new ScriptBrain(script, {}, null);
    expect(await all(brain.start(signal))).toEqual([
      { type: 'say', text: 'Getting you through.' },
      { type: 'send_dtmf', digits: '2#' },
      { type: 'transfer', target: 'human' },
    ]);
    expect(await all(brain.onTransferFailed('busy', signal))).toEqual([
      { type: 'say', text: 'Nobody is free.' },
      { type: 'end_call' },
    ]);
  });

  it.each([
    [{ a: { send_dtmf: '1x', end: true } }, /send_dtmf must be 1 to 32 DTMF keys/],
    [{ a: { transfer: 'human' } }, /transfer_failed names no node/],
    [{ a: { transfer: 'human', transfer_failed: 'a', end: true } }, /exactly one of/],
    [{ a: { transfer_failed: 'a', end: true } }, /transfer_failed needs "transfer"/],
    [{ a: { leave_voicemail: false, end: true } }, /leave_voicemail must be true/],
    [{ a: { leave_voicemail: true, end: true } }, /exactly one of/],
  ])('refuses a node %j', (nodes, why) => {
    expect(() => parseDialogScript({ start: 'a', nodes })).toThrow(why);
  });

  it('a leave_voicemail node says its words, then asks for the voicemail', async () => {
    const brain = new ScriptBrain(
      {
        start: 'a',
        nodes: {
          a: { say: 'Hello?', listen: [{ phrases: ['leave a message'], next: 'vm' }] },
          vm: { leave_voicemail: true },
        },
      },
      {},
      null,
    );
    const signal = new AbortController().signal;
    await all(brain.start(signal));
    expect(
      await all(
        brain.onCalleeTurn({ text: 'please leave a message', matchedPhrase: 'leave a message' }, signal),
      ),
    ).toEqual([{ type: 'leave_voicemail' }]);
  });

  it('greets with the rendered template and listens with the node phrases as its grammar', async () => {
    const brain = new ScriptBrain(example, { customer_name: 'Ann', appointment_day: 'Tuesday' }, null);
    const opening = await all(brain.start(signal));
    expect(opening).toEqual([{ type: 'say', text: expect.stringContaining('Hello Ann') }]);
    expect(brain.expectedPhrases()).toContain('yes that works');
    expect(brain.expectedPhrases()).toContain('take a message');
  });

  it('confirms on yes, sets the field, says goodbye and ends', async () => {
    const brain = new ScriptBrain(example, { customer_name: 'Ann', appointment_day: 'Tuesday' }, null);
    await all(brain.start(signal));
    const reply = await all(
      brain.onCalleeTurn({ text: 'yes that works', matchedPhrase: 'yes that works' }, signal),
    );
    expect(reply).toEqual([
      { type: 'say', text: 'Great, you are confirmed for Tuesday. Goodbye!' },
      { type: 'end_call' },
    ]);
    expect((await brain.analyze()).data).toEqual({ confirmed: true });
  });

  it('reschedules through the day question, matching words inside longer speech', async () => {
    const brain = new ScriptBrain(example, { customer_name: 'Bo', appointment_day: 'Monday' }, null);
    await all(brain.start(signal));
    expect(await all(brain.onCalleeTurn({ text: 'no i need to reschedule' }, signal))).toEqual([
      { type: 'say', text: 'No problem. Which weekday would suit you better?' },
    ]);
    const done = await all(brain.onCalleeTurn({ text: 'maybe thursday please' }, signal));
    expect(done.at(-1)).toEqual({ type: 'end_call' });
    expect((await brain.analyze()).data).toEqual({ confirmed: false, new_day: 'Thursday' });
  });

  it('asks again when nothing matches, then gives up politely', async () => {
    const brain = new ScriptBrain(example, { customer_name: 'Cy', appointment_day: 'Friday' }, null);
    await all(brain.start(signal));
    expect((await all(brain.onCalleeTurn({ text: 'banana' }, signal)))[0]).toMatchObject({
      text: expect.stringContaining('Sorry'),
    });
    expect(await all(brain.onCalleeTurn({ text: '' }, signal))).toEqual([
      { type: 'say', text: 'I am sorry, I will call you back later. Goodbye!' },
      { type: 'end_call' },
    ]);
  });

  it('captures a free-form message', async () => {
    const brain = new ScriptBrain(example, { customer_name: 'Di', appointment_day: 'Friday' }, null);
    await all(brain.start(signal));
    await all(brain.onCalleeTurn({ text: 'can you take a message' }, signal));
    expect(brain.expectedPhrases()).toBeUndefined();
    await all(brain.onCalleeTurn({ text: 'tell her i will be late' }, signal));
    expect((await brain.analyze()).data).toEqual({ message: 'tell her i will be late', message_taken: true });
  });

  it('says a first message instead of the start node and keeps its listen', async () => {
    const brain = new ScriptBrain(
      example,
      { customer_name: 'Ed', appointment_day: 'Friday' },
      'Hi {{customer_name}}!',
    );
    expect(await all(brain.start(signal))).toEqual([{ type: 'say', text: 'Hi Ed!' }]);
    expect(brain.expectedPhrases()).toContain('yes');
  });

  it('follows DTMF links', async () => {
    const script = parseDialogScript({
      start: 'menu',
      nodes: {
        menu: { say: 'Press 1.', listen: [{ phrases: ['one'], next: 'bye' }], dtmf: { '1': 'bye' } },
        bye: { say: 'Bye.', end: true },
      },
    });
    const brain = new ScriptBrain(script, {}, null);
    await all(brain.start(signal));
    expect(await all(brain.onDtmf('2', signal))).toEqual([]);
    expect(await all(brain.onDtmf('1', signal))).toEqual([
      { type: 'say', text: 'Bye.' },
      { type: 'end_call' },
    ]);
  });
});

describe('dialog script validation', () => {
  it.each([
    [null, 'JSON object'],
    [{ start: 'a', nodes: {} }, '1 to'],
    [{ start: 'x', nodes: { a: { end: true } } }, 'names no node'],
    [{ start: 'a', nodes: { a: { say: 'hi' } } }, 'exactly one of'],
    [{ start: 'a', nodes: { a: { next: 'b' } } }, 'names no node'],
    [{ start: 'a', nodes: { a: { listen: [{ phrases: ['x'], next: 'nope' }] } } }, 'names no node'],
    [{ start: 'a', nodes: { a: { end: true, set: { 'bad-name': 1 } } } }, 'field name'],
    [{ start: 'a', nodes: { a: { end: true, dtmf: { X: 'a' } } } }, 'DTMF key'],
  ])('refuses %j', (script, message) => {
    expect(() => parseDialogScript(script)).toThrow(message);
  });
});

describe('sentence splitting for streamed replies', () => {
  it('emits each sentence as soon as it is complete, not at abbreviations or decimals', () => {
    const splitter = new SentenceSplitter();
    expect(splitter.push('Hello Dr. Smith, your bill is 3.5 dollars')).toEqual([]);
    expect(splitter.push('. Is that ')).toEqual(['Hello Dr. Smith, your bill is 3.5 dollars.']);
    expect(splitter.push('fine? Yes!')).toEqual(['Is that fine?', 'Yes!']);
    expect(splitter.flush()).toEqual([]);
  });

  it('gives a sentence as soon as its last token arrives, unless the end could go on', () => {
    const splitter = new SentenceSplitter();
    const tokens = ['Okay', ',', ' thank', ' you.', ' Your', ' total', ' is', ' 3.', '5', ' dollars', '.'];
    const given = tokens.map((token) => splitter.push(token));
    expect(given[3]).toEqual(['Okay, thank you.']);
    expect(given[7]).toEqual([]); // "3." may be "3.5"
    expect(given[10]).toEqual(['Your total is 3.5 dollars.']);
    for (const open of ['Call Dr.', 'Ask J.', 'It is 4.']) {
      const waiting = new SentenceSplitter();
      expect(waiting.push(open)).toEqual([]);
    }
    const ellipsis = new SentenceSplitter();
    expect(ellipsis.push('Well.')).toEqual(['Well.']);
    expect(ellipsis.push('.. maybe')).toEqual([]);
    expect(ellipsis.flush()).toEqual(['maybe']);
  });
});

describe("a reply's first clause", () => {
  it('is taken out once its comma arrives after a word, never from a number or after a sentence', () => {
    const splitter = new SentenceSplitter();
    expect(splitter.push('Okay')).toEqual([]);
    expect(splitter.clause()).toBeNull();
    expect(splitter.push(',')).toEqual([]);
    expect(splitter.clause()).toBe('Okay,');
    expect(splitter.push(' thank')).toEqual([]);
    expect(splitter.push(' you.')).toEqual(['thank you.']);
    for (const open of ['It costs 1,', 'Hello Dr. Smith,']) {
      const waiting = new SentenceSplitter();
      waiting.push(open);
      expect(waiting.clause()).toBeNull();
    }
    const semicolon = new SentenceSplitter();
    semicolon.push('Right; ');
    expect(semicolon.clause()).toBe('Right;');
  });
});

describe('answering-machine beeps', () => {
  function framesUntilDetected(audio: Int16Array): number {
    const detector = new BeepDetector();
    for (let frame = 0; frame * 160 < audio.length; frame++) {
      if (detector.push(audio.subarray(frame * 160, frame * 160 + 160))) return frame;
    }
    return -1;
  }

  it('hears a 1 kHz beep within 300 ms and never a speech-like hum', () => {
    const frame = framesUntilDetected(beepTone(500));
    expect(frame).toBeGreaterThan(0);
    expect(frame * 20).toBeLessThanOrEqual(300);
    expect(framesUntilDetected(speechLikeTone(3000))).toBe(-1);
    expect(framesUntilDetected(new Int16Array(8000))).toBe(-1);
  });
});
