// Drives a real VS Code (code-server, in headless Chromium) as a person would, with the netc extension
// installed: open lenet.net, look at its colours, type a wrong argument and wait for the squiggle and the
// Problems entry, hover the first conv2d, mess up the whitespace and save. Each step asserts what the person
// would see and takes a screenshot. run.sh starts code-server and calls this; see README.md here.
//
// node drive.mjs URL WORKSPACE SHOTS_DIR PUPPETEER_DIR
import { createRequire } from 'node:module';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [url, workspace, shots, puppeteerDir] = process.argv.slice(2);
const require = createRequire(join(puppeteerDir, 'package.json'));
const puppeteer = require('puppeteer-core');
const file = join(workspace, 'lenet.net');
const original = readFileSync(file, 'utf8');
const results = [];

function check(name, ok, detail) {
  results.push({ name, ok, detail });
  console.log(`${ok ? 'PASS' : 'FAIL'} ${name}: ${detail}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Waits until fn() (run in the page) returns something truthy, or gives up after ms. */
async function waitIn(page, fn, arg, ms = 30000) {
  try {
    const handle = await page.waitForFunction(fn, { timeout: ms, polling: 250 }, arg);
    return await handle.jsonValue();
  } catch {
    return undefined;
  }
}

async function shot(page, name) {
  await page.screenshot({ path: join(shots, `${name}.png`) });
}

async function key(page, combo) {
  const keys = combo.split('+');
  for (const k of keys) await page.keyboard.down(k);
  for (const k of keys.reverse()) await page.keyboard.up(k);
  await sleep(150);
}

async function goToLine(page, line) {
  await key(page, 'Control+g');
  await page.keyboard.type(String(line));
  await page.keyboard.press('Enter');
  await sleep(300);
}

/** The text and colour of each token the editor shows, line by line. */
function tokens() {
  const lines = [...document.querySelectorAll('.monaco-editor .view-lines .view-line')];
  return lines.map((l) => ({
    top: parseFloat(l.style.top),
    spans: [...l.querySelectorAll('span[class^="mtk"], span[class*=" mtk"]')].map((s) => ({
      text: s.textContent,
      cls: s.className,
      color: getComputedStyle(s).color,
    })),
  })).sort((a, b) => a.top - b.top);
}

/** The editor's lines as text, top to bottom (its spaces are no-break spaces in the DOM). */
function editorLines() {
  return [...document.querySelectorAll('.monaco-editor .view-lines .view-line')]
    .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
    .map((l) => l.textContent.replace(/\u00a0/g, ' '));
}

async function openFile(page) {
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  await sleep(3000);
  await key(page, 'Control+p');
  await page.waitForSelector('.quick-input-widget input', { visible: true, timeout: 20000 });
  await page.keyboard.type('lenet.net');
  await sleep(1000);
  await page.keyboard.press('Enter');
  await page.waitForSelector('.monaco-editor .view-lines .view-line', { timeout: 20000 });
}

async function colours(page) {
  // the grammar loads asynchronously: wait until `model` has a colour of its own
  const seen = await waitIn(page, `(() => {
    const t = (${tokens})().flatMap((l) => l.spans);
    const of = (text) => t.find((s) => s.text.trim() === text);
    const want = { keyword: of('model'), layer: of('conv2d'), number: of('28'), comment: t.find((s) => s.text.startsWith('#')), key: of('members'), plain: of('lenet5') };
    if (Object.values(want).some((s) => !s)) return false;
    const colours = Object.fromEntries(Object.entries(want).map(([k, s]) => [k, s.color]));
    return new Set([colours.keyword, colours.number, colours.comment]).size === 3 ? colours : false;
  })()`);
  check('colours', Boolean(seen), seen ? JSON.stringify(seen) : 'keyword, number and comment never had three different colours');
  await shot(page, '1-colours');
}

async function hover(page) {
  const box = await page.evaluate(() => {
    const span = [...document.querySelectorAll('.monaco-editor .view-lines span')].find((s) => s.textContent === 'conv2d');
    if (!span) return undefined;
    const r = span.getBoundingClientRect();
    return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
  });
  if (!box) return check('hover', false, 'no conv2d token on screen');
  // the server may still be starting: move away and back until a hover with the shape shows
  let text;
  for (let i = 0; i < 10 && !text; i++) {
    await page.mouse.move(box.x + 200, box.y + 300);
    await sleep(300);
    await page.mouse.move(box.x, box.y);
    text = await waitIn(page, `(() => {
      const h = [...document.querySelectorAll('.monaco-hover')].map((e) => e.innerText).join('\\n');
      return h.includes('[28, 28, 6]') ? h : false;
    })()`, undefined, 3000);
  }
  check('hover shows [28, 28, 6]', Boolean(text), text ? JSON.stringify(text) : 'no hover with [28, 28, 6]');
  check('hover shows 156 parameters', Boolean(text && /\b156\b/.test(text)), text ? 'in the hover' : 'no hover');
  const table = await page.evaluate(() => [...document.querySelectorAll('.monaco-hover table tr')].map((r) => r.innerText.replace(/\s+/g, ' ').trim()));
  check('hover shows the docs line as a table', table.length === 2 && table[0].startsWith('layer'), JSON.stringify(table));
  await shot(page, '2-hover');
  await page.mouse.move(box.x + 200, box.y + 300);
  await key(page, 'Escape');
}

const wrong = ', strides: 2';

async function wrongArgument(page) {
  // line 3: conv2d(6, kernel: 5, padding: same, activation: relu)
  await goToLine(page, 3);
  await key(page, 'End');
  await key(page, 'ArrowLeft');
  await page.keyboard.type(wrong, { delay: 40 });
  await key(page, 'Escape'); // close any completion list
  const squiggle = await waitIn(page, `document.querySelectorAll('.monaco-editor .squiggly-error').length`);
  check('squiggle under the wrong argument', Boolean(squiggle), `${squiggle ?? 0} .squiggly-error decorations`);
  await key(page, 'Control+Shift+m');
  const problem = await waitIn(page, `(() => {
    const rows = [...document.querySelectorAll('.markers-panel .monaco-list-row')].map((r) => r.innerText);
    return rows.some((r) => r.includes('strides')) ? rows.join(' | ') : false;
  })()`, undefined, 15000);
  check('Problems entry', Boolean(problem), problem ? JSON.stringify(problem) : 'no Problems row naming strides');
  await shot(page, '3-error');
  // take the wrong argument back out
  await goToLine(page, 3);
  await key(page, 'End');
  await key(page, 'ArrowLeft');
  for (let i = 0; i < wrong.length; i++) await key(page, 'Backspace');
  const cleared = await waitIn(page, `document.querySelectorAll('.monaco-editor .squiggly-error').length === 0`, undefined, 15000);
  check('squiggle gone once the argument is removed', Boolean(cleared), cleared ? 'no .squiggly-error left' : 'a squiggle stayed');
}

async function formatOnSave(page) {
  // bad whitespace that keeps the meaning: four more spaces of indent on line 4, spaces before a call's
  // closing bracket on line 5, trailing spaces on line 6
  await goToLine(page, 4);
  await key(page, 'Home');
  await page.keyboard.type('    ');
  await goToLine(page, 5);
  await key(page, 'End');
  await key(page, 'ArrowLeft');
  await page.keyboard.type('   ');
  await goToLine(page, 6);
  await key(page, 'End');
  await page.keyboard.type('      ');
  await key(page, 'Escape');
  const messy = await page.evaluate(editorLines);
  const isMessy = messy[3] === '      maxpool2d(2)' && messy[4] === '  conv2d(16, kernel: 5, activation: relu   )' && messy[5] === '  maxpool2d(2)      ';
  check('the whitespace is messed up before saving', isMessy, JSON.stringify(messy.slice(3, 6)));
  await shot(page, '4-messy');
  const before = statSync(file).mtimeMs;
  await key(page, 'Control+s');
  // wait for the save to reach the disk, then for the editor to show no unsaved changes
  let written = false;
  for (let i = 0; i < 60 && !written; i++) {
    await sleep(250);
    written = statSync(file).mtimeMs !== before;
  }
  const clean = await waitIn(page, `!document.querySelector('.tabs-container .tab.active.dirty')`, undefined, 10000);
  const saved = readFileSync(file, 'utf8');
  // a save that did not format would write the messy text; a formatted one is the original again
  check('format on save', written && Boolean(clean) && saved === original,
    !written ? 'the file was never saved' : saved === original ? 'saved, and the file is examples/lenet.net byte for byte' : `saved text:\n${saved}`);
  const shown = await page.evaluate(editorLines);
  // the editor draws only the lines on screen: those must be the file's first lines
  const lines = original.split('\n');
  check('the editor shows the formatted text', shown.length >= 10 && shown.every((l, i) => l === lines[i]), `${shown.length} lines on screen; ${JSON.stringify(shown.slice(3, 6))}`);
  await shot(page, '5-saved');
}

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--window-size=1280,800'],
  defaultViewport: { width: 1280, height: 800 },
});
try {
  const page = await browser.newPage();
  await openFile(page);
  await colours(page);
  await hover(page);
  await wrongArgument(page);
  await formatOnSave(page);
} catch (e) {
  check('driver', false, e instanceof Error ? e.stack : String(e));
} finally {
  await browser.close();
}
writeFileSync(join(shots, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
const failed = results.filter((r) => !r.ok).length;
console.log(failed === 0 ? `all ${results.length} checks passed` : `${failed} of ${results.length} checks failed`);
process.exit(failed === 0 ? 0 : 1);
