import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { csvCell, csvHeaderLine, csvLine, describeResult } from './campaignResults.js';

describe('campaign results as CSV', () => {
  it('neutralises every cell that begins like a formula (OWASP), and nothing else', () => {
    for (const start of ['=', '+', '-', '@', '\t', '\r'])
      expect(csvCell(`${start}HYPERLINK("x")`).replace(/^"/, '')).toMatch(/^'/);
    expect(csvCell('=1+2')).toBe("'=1+2");
    expect(csvCell('+14155550123')).toBe("'+14155550123");
    expect(csvCell('Ann')).toBe('Ann');
    // Numbers the export writes itself are not text a spreadsheet would evaluate as a formula.
    expect(csvCell(-1.5)).toBe('-1.5');
    expect(csvCell(null)).toBe('');
    expect(csvCell(true)).toBe('true');
  });

  it('quotes commas, quotes and line breaks, and a parser reads the cells back', () => {
    const row = describeResult({
      contactId: 'cct_1',
      position: 0,
      toNumber: '+14155550123',
      state: 'done',
      removed: false,
      attempts: 2,
      lastOutcome: 'answered',
      lastCall: {
        id: 'call_1',
        status: 'completed',
        inProgressAt: '2026-11-27T10:00:00.000Z',
        endedAt: '2026-11-27T10:00:42.100Z',
        extractedData: { note: 'a, "b"\nc', formula: '=SUM(A1)' },
        analysis: {
          status: 'completed',
          reason: null,
          summary: '@cmd|calc',
          success: { passed: true, explanation: '' },
        },
        costUsd: 0.0213,
      },
    });
    const text = csvHeaderLine() + csvLine(row);
    const [parsed] = parse(text, { columns: true }) as Record<string, string>[];
    expect(parsed).toEqual({
      contact_id: 'cct_1',
      to_number: "'+14155550123",
      status: 'done',
      last_outcome: 'answered',
      attempts: '2',
      last_call_id: 'call_1',
      last_call_duration_seconds: '42.1',
      extracted_data: JSON.stringify({ note: 'a, "b"\nc', formula: '=SUM(A1)' }),
      summary: "'@cmd|calc",
      success: 'true',
      cost_usd: '0.0213',
    });
  });
});
