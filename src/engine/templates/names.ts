/**
 * The filters and tests a template names, checked against the ones the template environment has,
 * when the file loads: nunjucks looks them up only when a render reaches them, so an unknown one
 * (often a Jinja2 habit such as `| map('heading')`) used to fail the run after the models before it
 * were paid.
 */
import { didYouMean } from '../../schema/suggest.js';
import { templateEnv } from './env.js';

/** Jinja2 filters Nunjucks lacks, and what to write instead. */
const JINJA_FILTERS: Readonly<Record<string, string>> = {
  map: 'loop instead ({% for s in list %}{{ s.heading }}{% endfor %}), or join one attribute of each item: {{ list | join(", ", "heading") }}',
  tojson: 'use `dump` ({{ value | dump }})',
  items: 'loop over the pairs ({% for key, value in dict %}...{% endfor %}) or sort them with `dictsort`',
  count: 'use `length`',
  unique: 'loop and skip what was seen, or ask for unique items in the output_schema',
  min: 'use `sort | first`',
  max: 'use `sort | last`',
  attr: 'look the attribute up directly: value[name] or value.name',
  format: 'join the parts with ~ ({{ "Dear " ~ name }})',
  pprint: 'use `dump(2)`',
  wordwrap: 'ask the model for the line length you need',
  filesizeformat: 'compute the size in the node that produces it',
  xmlattr: 'write the attributes out: name="{{ value | escape }}"',
};

/** Jinja2 tests Nunjucks lacks, and what to write instead. */
const JINJA_TESTS: Readonly<Record<string, string>> = {
  sequence: 'use `is iterable`',
  boolean: 'use `is sameas(true)` or `is sameas(false)`',
  true: 'use `is sameas(true)`',
  false: 'use `is sameas(false)`',
  integer: 'use `is number`',
  float: 'use `is number`',
  in: 'use the `in` operator ({% if x in list %})',
};

/** The filters and tests of the environment (nunjucks' and this product's), which its typings omit. */
const env = templateEnv as unknown as { filters: object; tests: object };
const table = { filter: env.filters, test: env.tests };

/**
 * The problem with a filter or test name, or undefined when the environment has it: "did you mean",
 * and for a Jinja2 name Nunjucks lacks, what to write instead.
 */
export function unknownName(kind: 'filter' | 'test', name: string): string | undefined {
  if (Object.hasOwn(table[kind], name)) return undefined;
  const jinja = (kind === 'filter' ? JINJA_FILTERS : JINJA_TESTS)[name];
  if (jinja !== undefined)
    return `unknown ${kind} "${name}": Nunjucks has no such ${kind} (Jinja2 has); ${jinja}`;
  const known = Object.keys(table[kind]);
  const hint = didYouMean(name, known);
  return `unknown ${kind} "${name}"${hint || `; the ${kind}s are ${known.join(', ')}`}`;
}
