/** The hatchery the ask tests share: an `ask` node with two choices, then an echo of the answer. */
export const pick = {
  name: 'pick',
  desc: 'asks for a colour',
  nodes: [
    {
      name: 'Pick',
      type: 'ask',
      question: 'Which colour for {{ ctx.input }}?',
      choices: ['red', 'blue'],
      save_output: 'c',
      next: 'Say',
    },
    { name: 'Say', type: 'tool', tool_name: 'echo', tool_args: { text: 'painted {{ ctx.c }}' } },
  ],
};
