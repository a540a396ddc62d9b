import { describe, expect, it } from 'vitest';
import { keyValueLines, plainText, recordsTable, renderTable, wrapText } from './table.js';

describe('the CLI table renderer', () => {
  it('narrows free text from the right with an ellipsis, never an id, and fits the width', () => {
    const id = 'cmp_01M8G6RC4R9DMJYMQ0W9QEZF8C';
    const lines = renderTable(['CAMPAIGN_ID', 'STATUS', 'NAME'], [[id, 'running', 'x'.repeat(200)]], 60);
    expect(lines.every((line) => line.length <= 60)).toBe(true);
    expect(lines[1]).toMatch(new RegExp(`^${id} {2}running {2}x+…$`));
  });

  it('leaves columns out from the right when narrowing is not enough', () => {
    const ids = ['call_01M8G6Q2PJQTXE19G740WM18FT', 'agt_01M8G6Q0QGNKS7PV83EMV11TR2'];
    const lines = renderTable(['CALL_ID', 'AGENT_ID', 'STATUS'], [[...ids, 'completed']], 64);
    expect(lines[0]).toBe(`${'CALL_ID'.padEnd(ids[0]?.length ?? 0)}  AGENT_ID`);
    expect(lines[1]).toBe(ids.join('  '));
  });

  it('shows values as plain text: timestamps to the second in tables, objects as key=value', () => {
    expect(recordsTable([{ created_at: '2026-11-28T04:30:48.531Z', window: { start: '09:00' } }])).toEqual([
      'CREATED_AT           WINDOW',
      '2026-11-28 04:30:48  start=09:00',
    ]);
    expect(plainText({ a: { b: 1 }, c: [1, 2], d: null })).toBe('a.b=1 c=1,2 d=-');
  });

  it('wraps long values under themselves, one line per entry of a list of objects', () => {
    const lines = keyValueLines(
      { id: 'x', prompt: 'word '.repeat(40).trim(), log: [{ n: 1 }, { n: 2 }] },
      40,
    );
    expect(lines.every((line) => line.length <= 40)).toBe(true);
    expect(lines[1]).toMatch(/^prompt {2}word/);
    expect(lines[2]).toMatch(/^ {8}word/);
    expect(lines.slice(-2)).toEqual(['log     n=1', '        n=2']);
    expect(wrapText('abcdefghij', 4)).toEqual(['abcd', 'efgh', 'ij']);
  });
});
