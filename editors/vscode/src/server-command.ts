// Which netc the extension starts as its language server: the `netc.path` setting when it is set (a
// choice the user made wins), else the workspace's own netc (node_modules/.bin/netc of a workspace folder,
// the version the project pins, or bin/netc.js when the folder is a checkout of netc), else the netc on the
// PATH. No VS Code API here, so a test can run it.
import { readFileSync, statSync } from 'node:fs';
import { delimiter, extname, isAbsolute, join, resolve } from 'node:path';

export interface ServerLookup {
  /** the `netc.path` setting, '' when unset */
  setting: string;
  /** the workspace folders' paths, in VS Code's order */
  folders: string[];
  /** the PATH environment variable */
  path: string | undefined;
  platform: NodeJS.Platform;
  /** PATHEXT on Windows: the endings of commands */
  pathext?: string;
}

export interface ServerCommand {
  command: string;
  /** the arguments before `lsp` */
  args: string[];
  /** a Windows .cmd shim runs through the shell */
  shell: boolean;
  from: 'setting' | 'workspace' | 'PATH';
}

const isFile = (p: string) => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

/** A checkout of netc itself: its package.json names netc, and it has bin/netc.js (npm links no package into itself). */
function isNetcCheckout(folder: string): boolean {
  try {
    return JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')).name === 'netc' && isFile(join(folder, 'bin', 'netc.js'));
  } catch {
    return false;
  }
}

/** The names a command `netc` may have on this platform, in the order a shell tries them. */
function commandNames(platform: NodeJS.Platform, pathext: string | undefined): string[] {
  if (platform !== 'win32') return ['netc'];
  const endings = (pathext ?? '.COM;.EXE;.BAT;.CMD').split(';').filter(Boolean);
  return endings.map((e) => `netc${e.toLowerCase()}`);
}

function commandAt(file: string, from: ServerCommand['from']): ServerCommand {
  const ending = extname(file).toLowerCase();
  // a script file (a checkout's bin/netc.js) runs with the node on the PATH
  if (ending === '.js' || ending === '.mjs') return { command: 'node', args: [file], shell: false, from };
  return { command: file, args: [], shell: ending === '.cmd' || ending === '.bat', from };
}

/** The command that starts `netc lsp`, or a sentence saying why there is none. */
export function serverCommand(lookup: ServerLookup): ServerCommand | { error: string } {
  const names = commandNames(lookup.platform, lookup.pathext);
  const setting = lookup.setting.trim();
  if (setting) {
    const file = isAbsolute(setting) || lookup.folders.length === 0 ? resolve(setting) : resolve(lookup.folders[0], setting);
    if (!isFile(file)) return { error: `netc.path is set to ${setting}, but ${file} is not a file` };
    return commandAt(file, 'setting');
  }
  for (const folder of lookup.folders) {
    for (const name of names) {
      const file = join(folder, 'node_modules', '.bin', name);
      if (isFile(file)) return commandAt(file, 'workspace');
    }
    if (isNetcCheckout(folder)) return commandAt(join(folder, 'bin', 'netc.js'), 'workspace');
  }
  for (const dir of (lookup.path ?? '').split(delimiter).filter(Boolean)) {
    for (const name of names) {
      const file = join(dir, name);
      if (isFile(file)) return commandAt(file, 'PATH');
    }
  }
  return { error: 'netc was not found: install it in the workspace (npm install netc), put it on the PATH, or set netc.path' };
}
