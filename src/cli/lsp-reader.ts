// The language server's message reader: Content-Length framing as vscode-jsonrpc reads it, except that a
// frame that breaks (a Content-Length that lies, a body that is not JSON, a header without a length) is
// reported and skipped instead of silencing the server. JSON never holds a raw `Content-Length: N` line
// (a raw line break inside a JSON string is invalid), so a header seen inside a body marks where the next
// frame starts: reading resumes there, and every later message is answered.
import type { Readable } from 'node:stream';
import { AbstractMessageReader, type DataCallback, type Disposable, type Message } from 'vscode-languageserver/node';

const HEADER = /Content-Length:[ \t]*(\d+)\r\n(?:[^\r\n]*\r\n)*?\r\n/i;
const SEPARATOR = Buffer.from('\r\n\r\n');

/** What a broken frame was, for the log and the ParseError answer. */
export type FrameError = (why: string) => void;

export class ResyncingMessageReader extends AbstractMessageReader {
  private buffer = Buffer.alloc(0);

  constructor(
    private readonly readable: Readable,
    private readonly broken: FrameError,
  ) {
    super();
  }

  listen(callback: DataCallback): Disposable {
    const onData = (data: Buffer) => this.read(data, callback);
    this.readable.on('data', onData);
    this.readable.on('error', (e: Error) => this.fireError(e));
    this.readable.on('close', () => this.fireClose());
    return { dispose: () => void this.readable.off('data', onData) };
  }

  private read(data: Buffer, callback: DataCallback): void {
    this.buffer = Buffer.concat([this.buffer, data]);
    for (let frame = this.nextFrame(); frame !== undefined; frame = this.nextFrame()) {
      if (frame instanceof Error) this.broken(frame.message);
      else callback(frame);
    }
  }

  /** The next whole frame's message, an Error for a broken one (the buffer then resumes at the next header), or undefined to wait. */
  private nextFrame(): Message | Error | undefined {
    const end = this.buffer.indexOf(SEPARATOR);
    if (end < 0) return undefined;
    const header = HEADER.exec(this.buffer.subarray(0, end + 4).toString('ascii'));
    if (!header || header.index !== 0) {
      // bytes before a header (the rest of a body cut short): dropped up to the header, or with their own separator
      const why = `bytes that are no frame: ${JSON.stringify(this.buffer.subarray(0, Math.min(header?.index ?? end, 200)).toString('latin1'))}`;
      this.buffer = this.buffer.subarray(header ? header.index : end + 4);
      return new Error(why);
    }
    const start = end + 4;
    const length = Number(header[1]);
    const body = this.buffer.subarray(start, start + length);
    const inside = body.toString('latin1').search(/Content-Length:[ \t]*\d+\r\n/i);
    if (inside >= 0) {
      // reading resumes at the header found inside the body
      this.buffer = this.buffer.subarray(start + inside);
      return new Error(`a frame's Content-Length (${length}) runs into the next frame's header`);
    }
    if (body.length < length) return undefined;
    this.buffer = this.buffer.subarray(start + length);
    try {
      return JSON.parse(body.toString('utf8')) as Message;
    } catch (e) {
      return new Error(`a frame's body of ${length} bytes is not JSON (${(e as Error).message.slice(0, 200)})`);
    }
  }
}
