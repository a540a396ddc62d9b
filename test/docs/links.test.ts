import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { endReasons } from '../../src/domain/callStatus.js';
import { errorStatusByCode } from '../../src/domain/errors.js';

/**
 * The documentation a person gets with a clone: every relative link in README.md and docs/*.md
 * reaches a file of the repository (and, with an anchor, a heading in it); nothing points at files
 * outside it; and the API reference names every error code and end reason the code has.
 */

const root = new URL('../../', import.meta.url).pathname;
const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of markdown.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(match[1] as string);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Markdown links and images outside code blocks: [text](target). */
function linksOf(markdown: string): string[] {
  const withoutCode = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1] as string);
}

describe('the documentation in the repository', () => {
  it.each(documents)('%s: every relative link resolves, anchors included', (document) => {
    const text = readFileSync(join(root, document), 'utf8');
    const broken: string[] = [];
    for (const link of linksOf(text)) {
      if (/^(https?:|mailto:)/.test(link)) continue;
      const [path = '', anchor] = link.split('#', 2);
      const target = path === '' ? join(root, document) : join(root, dirname(document), path);
      if (
        !relative(root, target)
          .split('/')
          .every((part) => part !== '..') ||
        !existsSync(target)
      ) {
        broken.push(`${link} (no such file in the repository)`);
        continue;
      }
      if (anchor && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor))
        broken.push(`${link} (no such heading)`);
    }
    expect(broken).toEqual([]);
  });

  it.each(documents)('%s: names no file a clone does not have', (document) => {
    const text = readFileSync(join(root, document), 'utf8');
    expect(text).not.toMatch(/\.\.\/shared|SPEC\.md|DESIGN\.md|DESIGN §/);
  });

  it('docs/api.md names every error code with its status, and every end reason', () => {
    const reference = readFileSync(join(root, 'docs/api.md'), 'utf8');
    for (const [code, status] of Object.entries(errorStatusByCode))
      expect(reference, code).toMatch(new RegExp(`\\| ${status} \\| \`${code}\` \\|`));
    for (const reason of endReasons) expect(reference, reason).toContain(`| \`${reason}\` |`);
  });

  it('the slug rule matches the headings the docs link to', () => {
    expect(slug('The order of checks')).toBe('the-order-of-checks');
    expect(slug('Queue a call: `POST /v1/calls/outbound`')).toBe('queue-a-call-post-v1callsoutbound');
  });
});
