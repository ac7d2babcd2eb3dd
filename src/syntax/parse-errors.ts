// Short, user-facing parser messages instead of chevrotain's token-sequence listings.
import type { IParserErrorMessageProvider, IToken, TokenType } from 'chevrotain';

export function describeToken(token: IToken): string {
  if (token.tokenType.name === 'EOF') return 'the end of the file';
  const image = token.image.length > 20 ? token.image.slice(0, 20) + '…' : token.image;
  return `'${image}'`;
}

export function tokenLabel(type: TokenType): string {
  return type.LABEL ?? type.name;
}

function unique(labels: string[]): string {
  return [...new Set(labels)].join(' or ');
}

export const errorMessages: IParserErrorMessageProvider = {
  buildMismatchTokenMessage: ({ expected, actual }) => `expected ${tokenLabel(expected)}|${describeToken(actual)}`,
  buildNotAllInputParsedMessage: ({ firstRedundant }) => describeToken(firstRedundant),
  buildNoViableAltMessage: ({ expectedPathsPerAlt, actual }) =>
    `${describeToken(actual[0])}|${unique(expectedPathsPerAlt.flatMap((alt) => alt.map((path) => tokenLabel(path[0]))))}`,
  buildEarlyExitMessage: ({ expectedIterationPaths, actual }) =>
    `${describeToken(actual[0])}|${unique(expectedIterationPaths.map((path) => tokenLabel(path[0])))}`,
};
