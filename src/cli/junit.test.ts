import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeXml, type JunitTestSuite, junitXml } from './junit.js';

/** A parsed XML element: its name, attributes and children (text as strings), entities decoded. */
interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: (XmlElement | string)[];
}

const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(text: string): string {
  if (/&(?!(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-f]+);)/i.test(text)) throw new Error(`bare & in ${text}`);
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (_, reference: string) => {
    if (reference.startsWith('#x')) return String.fromCodePoint(Number.parseInt(reference.slice(2), 16));
    if (reference.startsWith('#')) return String.fromCodePoint(Number(reference.slice(1)));
    const character = entities[reference];
    if (character === undefined) throw new Error(`unknown entity &${reference};`);
    return character;
  });
}

/**
 * A strict reader of the XML subset the writer produces (declaration, elements, attributes in
 * double quotes, text): throws on anything not well formed, such as a raw `<` in text or an
 * unclosed element. Line ends and attribute values are normalised as XML parsers do (in an
 * attribute a raw line break or tab is a space; in text a raw CR is a line feed).
 */
function parseXml(document: string): XmlElement {
  const declaration = /^<\?xml version="1\.0" encoding="UTF-8"\?>\n/.exec(document);
  if (!declaration) throw new Error('no XML declaration');
  let at = declaration[0].length;
  const element = (): XmlElement => {
    const open = /^<([A-Za-z][\w.-]*)((?:\s+[A-Za-z][\w.-]*="[^"<]*")*)\s*(\/?)>/.exec(document.slice(at));
    if (!open) throw new Error(`expected an element at ${at}: ${document.slice(at, at + 40)}`);
    at += open[0].length;
    const attributes: Record<string, string> = {};
    for (const [, name, value] of (open[2] ?? '').matchAll(/([A-Za-z][\w.-]*)="([^"]*)"/g)) {
      attributes[name as string] = decode((value as string).replace(/[\t\n\r]/g, ' '));
    }
    const node: XmlElement = { name: open[1] as string, attributes, children: [] };
    if (open[3] === '/') return node;
    for (;;) {
      const text = /^[^<]*/.exec(document.slice(at))?.[0] ?? '';
      if (text.includes(']]>')) throw new Error(']]> in text');
      // As XML parsers do: a raw CR or CRLF in text is read as a line feed.
      if (text !== '') node.children.push(decode(text.replace(/\r\n?/g, '\n')));
      at += text.length;
      if (document.startsWith(`</${node.name}>`, at)) {
        at += node.name.length + 3;
        return node;
      }
      if (document.startsWith('</', at)) throw new Error(`mismatched end tag at ${at}`);
      node.children.push(element());
    }
  };
  const root = element();
  if (document.slice(at).trim() !== '') throw new Error('content after the root element');
  return root;
}

const elements = (node: XmlElement, name: string): XmlElement[] =>
  node.children.filter((child): child is XmlElement => typeof child !== 'string' && child.name === name);
const textOf = (node: XmlElement): string =>
  node.children.filter((child): child is string => typeof child === 'string').join('');

const suite: JunitTestSuite = {
  name: 'agt_1',
  timestamp: '2025-03-01T10:00:00.123Z',
  cases: [
    { classname: 'agt_1', name: 'confirms', timeS: 7.25 },
    {
      classname: 'agt_1',
      name: 'must <fail> & "quote" #2',
      timeS: 9.1,
      failure: {
        message: 'data.confirmed: expected false, got true',
        text: "data.confirmed: expected false, got true\n   0.1 s  agent: It's <fine> & done",
      },
    },
    {
      classname: 'agt_1',
      name: 'slow',
      timeS: null,
      error: { message: 'still running', text: 'the run timed out' },
    },
  ],
};

describe('junitXml', () => {
  it('writes testsuites/testsuite/testcase with counts, times and the failure as message and text', () => {
    const root = parseXml(junitXml([suite], 'callwright agent tests'));
    expect(root.name).toBe('testsuites');
    expect(root.attributes).toMatchObject({ tests: '3', failures: '1', errors: '1', time: '16.35' });
    const [testSuite] = elements(root, 'testsuite');
    expect(testSuite?.attributes).toMatchObject({
      name: 'agt_1',
      tests: '3',
      failures: '1',
      errors: '1',
      skipped: '0',
      timestamp: '2025-03-01T10:00:00',
    });
    const cases = elements(testSuite as XmlElement, 'testcase');
    expect(cases.map((testCase) => testCase.attributes)).toEqual([
      { classname: 'agt_1', name: 'confirms', time: '7.25' },
      { classname: 'agt_1', name: 'must <fail> & "quote" #2', time: '9.1' },
      { classname: 'agt_1', name: 'slow', time: '0' },
    ]);
    expect(cases[0]?.children).toEqual([]);
    const [failure] = elements(cases[1] as XmlElement, 'failure');
    expect(failure?.attributes.message).toBe('data.confirmed: expected false, got true');
    expect(textOf(failure as XmlElement)).toBe(suite.cases[1]?.failure?.text);
    const [error] = elements(cases[2] as XmlElement, 'error');
    expect(error?.attributes.message).toBe('still running');
  });

  it('keeps line breaks in a message attribute as character references', () => {
    const xml = junitXml(
      [
        {
          name: 's',
          cases: [{ classname: 'c', name: 'n', timeS: 1, failure: { message: 'a\nb\tc', text: '' } }],
        },
      ],
      'x',
    );
    expect(xml).toContain('message="a&#10;b&#9;c"');
    const testCase = elements(elements(parseXml(xml), 'testsuite')[0] as XmlElement, 'testcase')[0];
    expect(elements(testCase as XmlElement, 'failure')[0]?.attributes.message).toBe('a\nb\tc');
  });

  it('any text survives a round trip; characters XML cannot carry become U+FFFD', () => {
    const representable = (text: string) =>
      text.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD');
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (name, text) => {
        const xml = junitXml(
          [{ name, cases: [{ classname: name, name, timeS: 1, failure: { message: text, text } }] }],
          name,
        );
        const testSuite = elements(parseXml(xml), 'testsuite')[0] as XmlElement;
        const testCase = elements(testSuite, 'testcase')[0] as XmlElement;
        const failure = elements(testCase, 'failure')[0] as XmlElement;
        expect(testCase.attributes.name).toBe(representable(name));
        expect(textOf(failure)).toBe(representable(text));
        expect(failure.attributes.message).toBe(representable(text));
      }),
      { numRuns: 300 },
    );
  });

  it('escapes the five markup characters and a carriage return, nothing else', () => {
    expect(escapeXml(`a<b>&"c'\r\n`)).toBe('a&lt;b&gt;&amp;&quot;c&apos;&#13;\n');
    expect(escapeXml('plain text ✓ 😀')).toBe('plain text ✓ 😀');
    expect(escapeXml('bell\u0007 and \uD800 lone')).toBe('bell\uFFFD and \uFFFD lone');
  });
});
