import { describe, expect, it } from 'vitest';
import { parseDoNotCallCsv } from './doNotCallCsv.js';

describe('a do-not-call CSV', async () => {
  it('takes numbers with optional reasons, a header, quotes, a BOM and CRLF; each number once', async () => {
    const text =
      '\uFEFFnumber,reason\r\n+14155550123,"asked, politely"\r\n+442071838750\r\n\r\n+14155550123,again\r\n';
    expect(await parseDoNotCallCsv(text)).toEqual({
      entries: [
        { number: '+14155550123', reason: 'asked, politely' },
        { number: '+442071838750', reason: null },
      ],
      problems: [],
    });
  });

  it('names every bad row by its line and takes nothing', async () => {
    const text = [
      '+14155550123',
      '4155550123',
      '+1415555012a,x',
      '+14155550124,a,b',
      `+14155550125,${'r'.repeat(201)}`,
    ].join('\n');
    const result = await parseDoNotCallCsv(text);
    expect(result.entries).toEqual([]);
    expect(result.problems).toEqual([
      { line: 2, message: '"4155550123" is not an E.164 number' },
      { line: 3, message: '"+1415555012a" is not an E.164 number' },
      { line: 4, message: 'a row has at most two columns: number, reason' },
      { line: 5, message: 'the reason is longer than 200 characters' },
    ]);
  });

  it('refuses a file that is not CSV, not UTF-8, empty or too large', async () => {
    expect((await parseDoNotCallCsv('"+14155550123,unclosed')).problems[0]?.message).toMatch(
      /cannot be read/,
    );
    expect(
      (await parseDoNotCallCsv(Buffer.from([0x2b, 0x31, 0xff, 0xfe]).toString('utf8'))).problems,
    ).toEqual([{ line: 1, message: 'the file is not UTF-8 text' }]);
    expect((await parseDoNotCallCsv('number\n')).problems).toEqual([
      { line: 1, message: 'no numbers in the file' },
    ]);
    expect((await parseDoNotCallCsv(`+14155550123\n`.repeat(500_000))).problems).toEqual([
      { line: 1, message: 'the file is larger than 5 MiB' },
    ]);
  });
});
