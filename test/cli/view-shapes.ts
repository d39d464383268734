import { expect } from 'vitest';

/**
 * The final tree of the view tests' hatchery (a parallel node of two echo branches, then a drone whose
 * hatch: tool runs a leaf file), each line cut after its name: branch order depends on timing.
 */
export const FINAL_TREE = [
  '  ✔ P',
  expect.stringMatching(/^ {4}✔ [AB]$/),
  '      ✔ tool echo',
  expect.stringMatching(/^ {4}✔ [AB]$/),
  '      ✔ tool echo',
  '  ✔ Ask',
  '    ✔ tool leaf',
  '      ✔ leaf',
  '        ✔ Leaf',
  '          ✔ tool echo',
];
