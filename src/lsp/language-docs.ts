// The lines of docs/language.md that define the language's names, for hover. An installed netc has no docs/
// folder and the server reads nothing outside the package at run time, so the table is extracted at build
// time (`npm run lsp-docs`, scripts/generate-lsp-docs.ts) into language-docs.generated.ts; a test checks that
// the generated table is the one the page gives today.

/** One defining line: a table row or a bullet (its text as written), the section it is in, the names it defines. */
export interface DocLine {
  section: string;
  names: string[];
  text: string;
  /** a table row's header row (`| layer | arguments (defaults) | notes |`): one row alone is no markdown table */
  header?: string;
  /** the 1-based line of docs/language.md */
  line: number;
}

const identifier = /^[A-Za-z_][A-Za-z0-9_]*/;

/** The names a piece of markdown defines: the leading identifier of each `code` span in it. */
function namesIn(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(/`([^`]+)`/g)) {
    const name = identifier.exec(m[1].trim())?.[0];
    if (name && !names.includes(name)) names.push(name);
  }
  return names;
}

/** A table row's cells with the markdown left in: `| a | b |` → ['a', 'b']. */
const cells = (row: string): string[] => row.trim().replace(/^\||\|$/g, '').split(/(?<!\\)\|/).map((c) => c.trim());

/** The defining lines of docs/language.md: each table row (named by its first cell), each bullet that starts with a name, and the name lists of the Activations and Initialisers sections. */
export function extractDocs(markdown: string): DocLine[] {
  const out: DocLine[] = [];
  let section = '';
  let fenced = false;
  let header: string | undefined;
  const lines = markdown.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = raw.trimEnd();
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) return;
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    if (heading) {
      section = heading[1].replace(/`/g, '');
      return;
    }
    if (line.startsWith('|')) {
      // a table's first row is its header: the line before it is no row
      if (!lines[i - 1]?.trimStart().startsWith('|')) header = line;
      const [first, ...rest] = cells(line);
      if (/^-+$/.test(first.replace(/:/g, '')) || !rest.length || line === header) return;
      const names = namesIn(first);
      if (names.length) out.push({ section, names, text: line, ...(header && { header }), line: i + 1 });
      return;
    }
    const bullet = /^- `([^`]+)`/.exec(line);
    if (bullet) {
      const name = identifier.exec(bullet[1])?.[0];
      // with its continuation lines (indented)
      let text = line;
      for (let j = i + 1; j < lines.length && /^\s+\S/.test(lines[j]); j++) text += ' ' + lines[j].trim();
      if (name) out.push({ section, names: [name], text, line: i + 1 });
      return;
    }
    if ((section === 'Activations' || section === 'Initialisers') && line.startsWith('`')) {
      // the section's one paragraph, which may run over several lines
      let text = line;
      for (let j = i + 1; j < lines.length && lines[j].trim() !== ''; j++) text += ' ' + lines[j].trim();
      out.push({ section, names: namesIn(text), text, line: i + 1 });
    }
  });
  return out;
}

/** A defining line as markdown of its own: a table row under its header and delimiter row, so that it renders as a table. */
export function docMarkdown(d: DocLine): string {
  if (!d.header) return d.text;
  return [d.header, `|${cells(d.header).map(() => '---|').join('')}`, d.text].join('\n');
}

/** Where a name is looked up first, by what the cursor is on (a layer, a train key, a loss, ...). */
export type DocContext = 'layer' | 'layer-option' | 'block' | 'ensemble' | 'train' | 'schedule' | 'lr_schedule' | 'activation' | 'initializer' | 'loss' | 'optimizer' | 'data' | 'space' | 'split';

const sections: Record<DocContext, string[]> = {
  layer: ['Layers'],
  'layer-option': ['Layers'],
  block: ['Blocks'],
  ensemble: ['The ensemble block'],
  train: ['The train block'],
  schedule: ['Schedules'],
  lr_schedule: ['Learning-rate schedules'],
  activation: ['Activations'],
  initializer: ['Initialisers'],
  loss: ['Losses'],
  optimizer: ['Optimizers'],
  data: ['Data sources'],
  space: ['The ensemble block'],
  split: ['Members on their own data: split'],
};

/** The line that defines `name` where `context` says it belongs, else the first line of the page that does. */
export function docLineFor(table: readonly DocLine[], name: string, context?: DocContext): DocLine | undefined {
  const wanted = context ? sections[context] : [];
  const defining = table.filter((d) => d.names.includes(name));
  return defining.find((d) => wanted.includes(d.section)) ?? defining.find((d) => d.names[0] === name) ?? defining[0];
}
