// Whether two paths name one file: the same device and inode, so a symbolic link, a hard link and another
// spelling of the path (./x, a/../x) are all caught, as cp's "are the same file" is.
import { statSync, type Stats } from 'node:fs';

const stat = (path: string): Stats | undefined => {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
};

/** The first of `inputs` that `output` is (through links too); undefined when `output` does not exist or is none of them. */
export function sameFileAs(output: string, inputs: Iterable<string>): string | undefined {
  const out = stat(output);
  if (!out) return undefined;
  for (const input of inputs) {
    const s = stat(input);
    if (s && s.dev === out.dev && s.ino === out.ino) return input;
  }
  return undefined;
}
