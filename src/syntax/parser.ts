// The chevrotain grammar of .net files. Rules are class properties, so a misspelt sub-rule is a type
// error. The parser builds a CST and recovers from errors (re-sync and single-token insertion/deletion),
// so one run reports every syntax error; ast.ts turns the CST into the typed AST.
import type { IToken, TokenType } from 'chevrotain';
import { CstParser, tokenMatcher } from './chevrotain.js';
import * as T from './tokens.js';
import { errorMessages } from './parse-errors.js';

export class NetParser extends CstParser {
  constructor() {
    super(T.allTokens, { recoveryEnabled: true, maxLookahead: 3, errorMessageProvider: errorMessages });
    this.performSelfAnalysis();
  }

  file = this.RULE('file', () => {
    this.MANY(() => this.SUBRULE(this.block));
  });

  block = this.RULE('block', () => {
    this.OR([
      { ALT: () => this.SUBRULE(this.modelBlock) },
      { ALT: () => this.SUBRULE(this.ensembleBlock) },
      { ALT: () => this.SUBRULE(this.trainBlock) },
      { ALT: () => this.SUBRULE(this.scheduleBlock) },
      { ALT: () => this.SUBRULE(this.unknownBlock) },
    ]);
  });

  /** `name { ... }` with a name that is no block keyword: parsed, so that the checker can name it */
  unknownBlock = this.RULE('unknownBlock', () => {
    this.CONSUME(T.Identifier, { LABEL: 'name' });
    this.SUBRULE(this.entries);
  });

  modelBlock = this.RULE('modelBlock', () => {
    this.CONSUME(T.Model);
    this.CONSUME(T.Identifier, { LABEL: 'name' });
    this.OPTION(() => {
      this.CONSUME(T.LParen);
      this.OPTION2(() => this.SUBRULE(this.argList));
      this.CONSUME(T.RParen);
    });
    this.CONSUME(T.LCurly);
    this.MANY(() => {
      this.SUBRULE(this.statement);
      this.OPTION3(() => this.CONSUME(T.Comma));
    });
    this.CONSUME(T.RCurly);
  });

  /** `label = layer(args)` or `layer(args)`, either with `shared` before the layer */
  statement = this.RULE('statement', () => {
    this.OPTION(() => {
      this.CONSUME(T.Identifier, { LABEL: 'label' });
      this.CONSUME(T.Equals);
    });
    // `shared` is a keyword only before a layer's name: `shared(...)` stays a call (of an unknown layer)
    this.OPTION2({ GATE: () => tokenMatcher(this.LA(2), T.Identifier), DEF: () => this.CONSUME(T.Shared) });
    this.SUBRULE(this.call);
  });

  ensembleBlock = this.RULE('ensembleBlock', () => {
    this.CONSUME(T.Ensemble);
    this.SUBRULE(this.entries);
  });

  trainBlock = this.RULE('trainBlock', () => {
    this.CONSUME(T.Train);
    this.SUBRULE(this.entries);
  });

  scheduleBlock = this.RULE('scheduleBlock', () => {
    this.CONSUME(T.Schedule);
    this.CONSUME(T.Identifier, { LABEL: 'name' });
    this.SUBRULE(this.entries);
  });

  entries = this.RULE('entries', () => {
    this.CONSUME(T.LCurly);
    this.MANY(() => {
      this.SUBRULE(this.entry);
      this.OPTION(() => this.CONSUME(T.Comma));
    });
    this.CONSUME(T.RCurly);
  });

  /** `key: value` or `vary path.to.arg: space` */
  entry = this.RULE('entry', () => {
    this.OR([
      {
        ALT: () => {
          this.CONSUME(T.Vary);
          this.SUBRULE(this.path);
        },
      },
      { ALT: () => this.CONSUME(T.Identifier, { LABEL: 'key' }) },
    ]);
    this.CONSUME(T.Colon);
    this.SUBRULE(this.value);
  });

  path = this.RULE('path', () => {
    this.CONSUME(T.Identifier);
    this.MANY(() => {
      this.CONSUME(T.Dot);
      this.CONSUME2(T.Identifier);
    });
  });

  call = this.RULE('call', () => {
    this.CONSUME(T.Identifier, { LABEL: 'callee' });
    this.CONSUME(T.LParen);
    this.OPTION(() => this.SUBRULE(this.argList));
    this.CONSUME(T.RParen);
  });

  argList = this.RULE('argList', () => {
    this.SUBRULE(this.arg);
    this.MANY(() => {
      this.CONSUME(T.Comma);
      this.SUBRULE2(this.arg);
    });
    this.OPTION(() => this.CONSUME2(T.Comma));
  });

  /** `key: value` or a positional `value` */
  arg = this.RULE('arg', () => {
    this.OPTION(() => {
      this.CONSUME(T.Identifier, { LABEL: 'key' });
      this.CONSUME(T.Colon);
    });
    this.SUBRULE(this.value);
  });

  value = this.RULE('value', () => {
    this.OR([
      { ALT: () => this.SUBRULE(this.numberOrQuantity) },
      { ALT: () => this.CONSUME(T.StringLiteral) },
      { ALT: () => this.CONSUME(T.True) },
      { ALT: () => this.CONSUME(T.False) },
      { ALT: () => this.SUBRULE(this.list) },
      { ALT: () => this.SUBRULE(this.nameOrCall) },
    ]);
  });

  /** `2` or `2 epochs`. A name after a number is its unit unless it starts the next `key:` entry. */
  numberOrQuantity = this.RULE('numberOrQuantity', () => {
    this.CONSUME(T.NumberLiteral);
    this.OPTION({
      GATE: () => this.LA(2).tokenType !== T.Colon,
      DEF: () => this.CONSUME(T.Identifier, { LABEL: 'unit' }),
    });
  });

  nameOrCall = this.RULE('nameOrCall', () => {
    this.CONSUME(T.Identifier, { LABEL: 'name' });
    this.OPTION(() => {
      this.CONSUME(T.LParen);
      this.OPTION2(() => this.SUBRULE(this.argList));
      this.CONSUME(T.RParen);
    });
  });

  list = this.RULE('list', () => {
    this.CONSUME(T.LBracket);
    this.OPTION(() => {
      this.SUBRULE(this.value);
      this.MANY(() => {
        this.CONSUME(T.Comma);
        this.SUBRULE2(this.value);
      });
      this.OPTION2(() => this.CONSUME2(T.Comma));
    });
    this.CONSUME(T.RBracket);
  });
}

/** One shared instance: chevrotain parsers are reusable after `input` is reset. */
export const netParser = new NetParser();

export type { IToken, TokenType };
