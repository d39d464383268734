import { writeFile } from 'node:fs/promises';
import { HatcheryError } from '../core/errors.js';
import { loadHatchery } from '../loader/load.js';
import { hatcheryToMermaid, withoutFontImports } from '../loader/mermaid.js';
import { EXIT, parseCommand } from './args.js';
import { readMcpConfig } from './config.js';
import { printOut } from './print.js';

/** Help text of `hatchery-mcp graph`. */
export const GRAPH_HELP = `Usage: hatchery-mcp graph <file> [options]

Draws a hatchery's nodes and routing as a Mermaid flowchart.

Options:
  --format FORMAT     mermaid (default): the Mermaid text, for GitHub, docs and editors
                      svg: an SVG picture; ascii: a drawing for the terminal
  -o, --output FILE   write to FILE instead of stdout
  --mcp-config FILE   MCP servers that mcp: tool references may name
  -h, --help          show this help

Shapes: drone (rounded box), tool (double-sided box), script (box), parallel (hexagon),
map (cylinder), loop (diamond), ask (circle); "start" (stadium) points at the first node, END is a
double circle. Dotted edges: on_limit, node: and hatch: tools (a hatch: file is a flag).

Exit codes: 0 drawn, 2 bad command line, 3 invalid hatchery file.`;

const FORMATS = ['mermaid', 'svg', 'ascii'] as const;

/** `hatchery-mcp graph`: returns the exit code. */
export async function graphCommand(argv: string[]): Promise<number> {
  const args = parseCommand(argv, 'graph', GRAPH_HELP, {
    format: { type: 'string' },
    output: { type: 'string', short: 'o' },
    'mcp-config': { type: 'string' },
  });
  if (!args) return EXIT.OK;
  const { values, positionals } = args;
  const format = values.format ?? 'mermaid';
  if (!(FORMATS as readonly string[]).includes(format))
    throw new HatcheryError('USAGE', `--format must be one of ${FORMATS.join(', ')}, got "${format}"`);
  if (positionals.length !== 1)
    throw new HatcheryError('USAGE', `graph takes one hatchery file\n\n${GRAPH_HELP}`);
  const mcpServers = values['mcp-config'] ? await readMcpConfig(values['mcp-config']) : undefined;
  const h = await loadHatchery(positionals[0] as string, { mcpServers });
  let text = hatcheryToMermaid(h);
  if (format !== 'mermaid') {
    const mermaid = hatcheryToMermaid(h, { layout: true });
    // Loaded only here: every other command starts without the renderer.
    const bm = await import('beautiful-mermaid');
    text =
      format === 'svg'
        ? `${withoutFontImports(bm.renderMermaidSVG(mermaid))}\n`
        : `${bm.renderMermaidASCII(mermaid, { colorMode: values.output || process.env.NO_COLOR ? 'none' : 'auto' })}\n`;
  }
  if (values.output) await writeFile(values.output, text);
  else printOut(text);
  return EXIT.OK;
}
