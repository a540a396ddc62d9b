/**
 * JUnit XML, the test report format CI systems read (`<testsuites>` / `<testsuite>` / `<testcase>`
 * with `<failure>` or `<error>`), as the Ant/Surefire convention has it. Pure: cases in, text out.
 */

export interface JunitProblem {
  /** One line: the `message` attribute. */
  message: string;
  /** The element's text: everything worth reading (reasons, a transcript). */
  text: string;
}

export interface JunitTestCase {
  classname: string;
  name: string;
  /** Seconds; null when unknown (written as 0). */
  timeS: number | null;
  /** An expectation was not met. */
  failure?: JunitProblem;
  /** The test could not be judged (e.g. still running when the run timed out). */
  error?: JunitProblem;
}

export interface JunitTestSuite {
  name: string;
  /** ISO 8601 time the suite started. */
  timestamp?: string;
  cases: JunitTestCase[];
}

/**
 * Characters XML 1.0 cannot carry at all, even escaped: C0 controls but tab, newline and carriage
 * return; lone surrogates; U+FFFE and U+FFFF. They become U+FFFD.
 */
const notXmlCharacters = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/**
 * Text for element content or an attribute value: escaped, unrepresentable characters replaced, and
 * a carriage return kept as a reference (a parser would turn a raw one into a line feed).
 */
export function escapeXml(text: string): string {
  return text
    .replace(notXmlCharacters, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(/\r/g, '&#13;');
}

/** An attribute value: escaped, and line breaks and tabs kept as references (a parser would fold them). */
function attribute(name: string, value: string | number): string {
  const escaped = escapeXml(String(value)).replace(/\n/g, '&#10;').replace(/\t/g, '&#9;');
  return ` ${name}="${escaped}"`;
}

function seconds(timeS: number | null): string {
  if (timeS === null || !Number.isFinite(timeS) || timeS < 0) return '0';
  return String(Math.round(timeS * 1000) / 1000);
}

/** xs:dateTime without a zone, as the JUnit schema has it (the time stays UTC). */
function junitTimestamp(iso: string): string {
  return iso.replace(/(\.\d+)?Z$/, '');
}

function counts(cases: readonly JunitTestCase[]) {
  return {
    tests: cases.length,
    failures: cases.filter((testCase) => testCase.failure !== undefined).length,
    errors: cases.filter((testCase) => testCase.failure === undefined && testCase.error !== undefined).length,
    timeS: cases.reduce((sum, testCase) => sum + (testCase.timeS ?? 0), 0),
  };
}

function testCaseXml(testCase: JunitTestCase): string {
  const head = `    <testcase${attribute('classname', testCase.classname)}${attribute('name', testCase.name)}${attribute('time', seconds(testCase.timeS))}`;
  const problem = testCase.failure
    ? { element: 'failure', ...testCase.failure }
    : testCase.error
      ? { element: 'error', ...testCase.error }
      : null;
  if (problem === null) return `${head}/>`;
  return [
    `${head}>`,
    `      <${problem.element}${attribute('message', problem.message)}>${escapeXml(problem.text)}</${problem.element}>`,
    '    </testcase>',
  ].join('\n');
}

/** A JUnit XML document of the suites, named `name`. */
export function junitXml(suites: readonly JunitTestSuite[], name: string): string {
  const all = counts(suites.flatMap((suite) => suite.cases));
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attribute('name', name)}${attribute('tests', all.tests)}${attribute('failures', all.failures)}${attribute('errors', all.errors)}${attribute('time', seconds(all.timeS))}>`,
  ];
  for (const suite of suites) {
    const own = counts(suite.cases);
    lines.push(
      `  <testsuite${attribute('name', suite.name)}${attribute('tests', own.tests)}${attribute('failures', own.failures)}${attribute('errors', own.errors)}${attribute('skipped', 0)}${attribute('time', seconds(own.timeS))}${suite.timestamp ? attribute('timestamp', junitTimestamp(suite.timestamp)) : ''}>`,
    );
    for (const testCase of suite.cases) lines.push(testCaseXml(testCase));
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}
