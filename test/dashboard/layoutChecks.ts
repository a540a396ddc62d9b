import type { Locator, Page } from 'playwright-core';

// The page's globals, as far as the functions run in the browser use them: the project compiles
// without the DOM library, so they are declared here, for this module only.
interface Rect {
  top: number;
  bottom: number;
  left: number;
  right: number;
  width: number;
  height: number;
}
interface DomNode {
  nodeType: number;
  textContent: string | null;
}
interface DomElement extends DomNode {
  tagName: string;
  className: string;
  childNodes: Iterable<DomNode>;
  children: Iterable<DomElement>;
  scrollWidth: number;
  clientWidth: number;
  getBoundingClientRect(): Rect;
  closest(selector: string): DomElement | null;
  querySelector(selector: string): DomElement | null;
}
declare const document: {
  querySelectorAll(selector: string): Iterable<DomElement> & { length: number };
  scrollingElement: DomElement | null;
  documentElement: DomElement;
  createRange(): {
    selectNodeContents(node: DomNode): void;
    getBoundingClientRect(): Rect;
    getClientRects(): Iterable<Rect>;
  };
};
declare const Node: { TEXT_NODE: number };
declare function getComputedStyle(element: DomElement): {
  display: string;
  overflowX: string;
  visibility: string;
  backgroundColor: string;
};

/**
 * What a person would see wrong on a dashboard page, measured in the browser rather than judged
 * from a screenshot: headings, text that runs out of its box, labels glued to their inputs and ids
 * broken over two lines. Every list is empty on a page without such a fault.
 */
export interface LayoutReport {
  h1Count: number;
  /** Heading texts (h1–h3) that appear more than once. */
  repeatedHeadings: string[];
  /** Elements whose text is wider than their box (scrollWidth > clientWidth), described. */
  overflowing: string[];
  /** How far the page scrolls sideways, px (0: it fits the viewport). */
  pageScrollPx: number;
  /** Labels whose text and input touch (less than 4 px apart, on the same line). */
  labelsTouching: string[];
  /** Ids (call_…, evt_…) and event types (call.answered) laid out over more than one line. */
  brokenIds: string[];
}

export async function layoutReport(page: Page): Promise<LayoutReport> {
  return page.evaluate(() => {
    const describe = (element: DomElement): string => {
      const text = (element.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 60);
      return `${element.tagName.toLowerCase()}${element.className ? `.${String(element.className).replace(/\s+/g, '.')}` : ''} "${text}"`;
    };
    const visible = (element: DomElement): boolean => {
      const rect = element.getBoundingClientRect();
      return rect.width > 0 && rect.height > 0 && getComputedStyle(element).visibility !== 'hidden';
    };
    const headings = [...document.querySelectorAll('h1, h2, h3')]
      .filter(visible)
      .map((heading) => (heading.textContent ?? '').replace(/\s+/g, ' ').trim());
    const repeatedHeadings = [...new Set(headings.filter((text, index) => headings.indexOf(text) !== index))];

    // Text in a box: any non-inline element with a text node of its own. A box that scrolls on
    // purpose (overflow auto/scroll) and what is clipped for screen readers only do not count.
    const overflowing: string[] = [];
    for (const element of document.querySelectorAll('body *')) {
      if (!visible(element) || element.closest('.visually-hidden, .skip, svg')) continue;
      const style = getComputedStyle(element);
      if (style.display === 'inline' || ['auto', 'scroll'].includes(style.overflowX)) continue;
      if (['INPUT', 'SELECT', 'TEXTAREA', 'PROGRESS', 'AUDIO', 'OPTION'].includes(element.tagName)) continue;
      const hasText = [...element.childNodes].some(
        (node) => node.nodeType === Node.TEXT_NODE && (node.textContent ?? '').trim() !== '',
      );
      const hasInlineText = [...element.children].some(
        (child) => getComputedStyle(child).display === 'inline' && (child.textContent ?? '').trim() !== '',
      );
      if ((hasText || hasInlineText) && element.scrollWidth > element.clientWidth + 1)
        overflowing.push(`${describe(element)} ${element.scrollWidth} > ${element.clientWidth} px`);
    }
    const root = document.scrollingElement ?? document.documentElement;
    const pageScrollPx = Math.max(0, root.scrollWidth - root.clientWidth);

    const labelsTouching: string[] = [];
    for (const label of document.querySelectorAll('main label')) {
      const input = label.querySelector(
        'input:not([type=hidden]):not([type=checkbox]):not([type=radio]), select, textarea',
      );
      const textNode = [...label.childNodes].find(
        (node) => node.nodeType === Node.TEXT_NODE && (node.textContent ?? '').trim() !== '',
      );
      if (!input || !textNode || !visible(input)) continue;
      const range = document.createRange();
      range.selectNodeContents(textNode);
      const text = range.getBoundingClientRect();
      const box = input.getBoundingClientRect();
      const below = box.top >= text.bottom - 1;
      const apart = box.left >= text.right + 4 || text.left >= box.right + 4;
      if (!below && !apart) labelsTouching.push(describe(label));
    }

    const brokenIds: string[] = [];
    // Ids, and event types (call.answered), are words one copies or searches for whole.
    const idPattern = /^((call|evt|cmp|trn|agt|cct)_[0-9A-Za-z]+|(call|campaign|number)\.[a-z_]+)$/;
    for (const element of document.querySelectorAll('main *')) {
      const own = [...element.childNodes]
        .filter((node) => node.nodeType === Node.TEXT_NODE)
        .map((node) => node.textContent ?? '')
        .join('')
        .trim();
      if (!idPattern.test(own) || !visible(element)) continue;
      const range = document.createRange();
      range.selectNodeContents(element);
      const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
      if (lines.size > 1) brokenIds.push(`${describe(element)} over ${lines.size} lines`);
    }
    return {
      h1Count: document.querySelectorAll('h1').length,
      repeatedHeadings,
      overflowing,
      pageScrollPx,
      labelsTouching,
      brokenIds,
    };
  });
}

/** The gap between two elements' boxes, px: horizontal if they share a line, else vertical. */
export async function gapBetweenPx(page: Page, first: string, second: string): Promise<number> {
  const [a, b] = await Promise.all([page.locator(first).boundingBox(), page.locator(second).boundingBox()]);
  if (!a || !b) throw new Error(`${first} or ${second} is not laid out`);
  const sameLine = a.y < b.y + b.height && b.y < a.y + a.height;
  if (sameLine) return Math.max(b.x - (a.x + a.width), a.x - (b.x + b.width));
  return Math.max(b.y - (a.y + a.height), a.y - (b.y + b.height));
}

/** An element's computed background colour, as `rgb(r, g, b)`. */
export async function backgroundColorOf(locator: Locator): Promise<string> {
  return locator.evaluate((element) => getComputedStyle(element as unknown as DomElement).backgroundColor);
}
