// The one catalogue of diagnostics. Codes are stable: never renumber, only add.
// NET1xxx syntax, NET2xxx names and shapes, NET3xxx ensemble and schedules, NET4xxx training and data.
// `{0}`, `{1}`, ... are replaced by the arguments given when the diagnostic is reported.
import type { Category } from './diagnostic.js';

export interface MessageDef {
  code: number;
  category: Category;
  text: string;
}

const error = (code: number, text: string): MessageDef => ({ code, category: 'error', text });
const warning = (code: number, text: string): MessageDef => ({ code, category: 'warning', text });

export const Messages = {
  // --- syntax ---------------------------------------------------------------------------------
  UnexpectedCharacter: error(1001, "unexpected character '{0}'"),
  UnterminatedString: error(1002, 'unterminated string: a string must end with " on the same line'),
  ExpectedToken: error(1003, 'expected {0}, found {1}'),
  UnexpectedToken: error(1004, 'unexpected {0}; expected {1}'),
  TrailingInput: error(1005, 'unexpected {0}; a file holds only model, ensemble, train and schedule blocks'),
  DuplicateBlock: error(1006, "a file holds at most one '{0}' block; the first one is at line {1}"),
  MissingModel: error(1007, "the file has no 'model' block"),
  DuplicateSchedule: error(1008, "schedule '{0}' is given twice"),
  UnknownBlock: error(1009, "unknown block '{0}'{1}; a file holds model, ensemble, train and schedule blocks"),
  BinaryFile: error(1010, "'{0}' is not a .net text file (binary data at byte offset {1}: {2})"),
  DocumentTooLarge: warning(1012, 'this document is {0} KB; netc lsp analyses documents of up to {1} KB as they are edited, so it gives no diagnostics, hovers or completions here; run netc check on the file'),
  SourceTooLarge: error(1013, "'{0}' is {1} MB; netc reads .net files of up to {2} MB (a model file is a few KB)"),
  NestingTooDeep: error(1011, 'brackets nest more than {0} deep here; nothing in a .net file needs this many, and what they hold is not read'),

  // --- names, arguments and shapes -----------------------------------------------------------
  UnknownName: error(2001, "unknown {0} '{1}'{2}; expected one of: {3}"),
  UnknownArgument: error(2002, "{0} has no argument '{1}'{2}; its arguments are: {3}"),
  MissingArgument: error(2003, "{0} needs the argument '{1}'"),
  WrongType: error(2004, '{0} must be {1}, got {2}'),
  OutOfRange: error(2005, '{0} must be {1}, got {2}'),
  TooManyArguments: error(2006, '{0} takes at most {1} positional argument(s)'),
  ArgumentTwice: error(2007, "argument '{0}' is given twice"),
  DuplicateLabel: error(2008, "label '{0}' is already defined at line {1}"),
  UndefinedLabel: error(2009, "'{0}' is not a label defined in this model{1}"),
  LabelUsedBeforeDefinition: error(2010, "label '{0}' is used before it is defined (at line {1}); a layer can only read earlier outputs"),
  ReservedLabel: error(2011, "'{0}' is reserved: it names the model's input"),
  EmptyModel: error(2012, "model '{0}' has no layers"),
  InputRank: error(2014, '{0} expects {1} input, got shape {2}{3}'),
  KernelTooLarge: error(2015, '{0} window {1} is larger than its input {2} (padding: valid)'),
  ShapeMismatch: error(2016, '{0}: shapes {1} do not match'),
  EmptyOutput: error(2017, '{0} produces an empty output {1} from input {2}'),
  NeedsInputs: error(2018, '{0} needs at least {1} labelled inputs, got {2}'),
  SharedWithoutWeights: error(2019, "'shared' goes before a layer with weights ({0}); {1} has none to share"),
  HeadsDoNotDivide: error(2021, '{0}: heads must divide the width {1} of its input {2} (each head takes width / heads features), got heads: {3}'),

  // --- ensemble and schedules ----------------------------------------------------------------
  UnknownEnsembleKey: error(3002, "unknown ensemble key '{0}'{1}; expected one of: {2}"),
  UnknownVaryPath: error(3003, "vary {0}: {1}"),
  VaryChangesShape: error(3004, "vary {0}: '{1}' changes the layer's shape, and all members must share one architecture"),
  BadSpace: error(3005, '{0}'),
  VaryTwice: error(3006, "'{0}' is varied twice"),
  DuplicateKey: error(3007, "key '{0}' is given twice in this block"),
  VaryOutsideEnsemble: error(3008, "'vary' belongs in the ensemble block"),
  UnknownSchedule: error(3010, "unknown schedule '{0}'{1}; expected one of: {2}"),
  UnknownScheduleKey: error(3011, "schedule {0} has no key '{1}'{2}; its keys are: {3}"),
  ScheduleNeedsValidation: warning(3014, "schedule {0} ranks members by {1}, but there is no validation data, so it ranks them by {2} instead; set 'validation' in the train block (e.g. validation: 0.2) to rank by {1}"),
  ScheduleAccuracyNeedsClasses: error(3020, '{0} watches {1}, which needs class predictions, but {2} is a regression loss; use {3} instead'),
  NothingVaries: warning(3015, 'schedule pbt perturbs varied hyperparameters, and nothing varies: members will only copy each other'),
  VarySharedLayer: error(3016, "vary {0}: layer '{1}' is shared: one set of its weights serves every member, so its arguments cannot differ between members"),
  SplitWithValidation: error(3030, "split: {0} validates each member on examples of its own ({1}), so 'validation' must be 0 or left out; remove validation: {2}"),
  SplitWithPbt: error(3031, 'schedule pbt is refused with split: {0}: an exploit copies one member\'s weights into another that trains on other examples, so the copy would carry examples of its held-out set into it and its validation metric would no longer be held out; use halving or early_stopping, which rank each member by its own held-out metric'),
  SplitMembers: error(3032, 'split: kfold({0}) gives each setting of the varied hyperparameters k = {0} members, one per fold, so members must be a multiple of {0}, got {1}'),
  SplitWithShared: error(3033, "split: kfold({0}) is refused with shared layers: a shared layer trains on every member's examples, so each member's trunk would have seen its own held-out fold; leave 'shared' out, or use split: bootstrap()"),
  BadInterval: error(3013, "{0} must be an interval such as '2 epochs' or '500 steps', got {1}"),

  // --- training and data ---------------------------------------------------------------------
  MissingTrain: error(4001, "the file has no 'train' block, so there is nothing to train"),
  UnknownTrainKey: error(4002, "unknown train key '{0}'{1}; expected one of: {2}"),
  EpochsAndSteps: error(4003, "give exactly one of 'epochs' or 'steps', not both"),
  NoEpochsOrSteps: error(4004, "the train block needs 'epochs' or 'steps'"),
  MissingTrainKey: error(4005, "the train block needs '{0}'"),
  InputDoesNotFitData: error(4006, "the model input {0} does not fit the data: {1} gives {2}"),
  OutputDoesNotFitLoss: error(4007, '{0}'),
  DataFile: error(4008, '{0}'),
  ActivationLossMismatch: warning(4009, '{0}'),
  LabelNotAClass: error(4032, "{0} line {1} has the label {2}, which is not a class index for the last layer's {3} units: {4} needs integer class labels in 0..{5}; {6}"),
  CsvLabelTaken: warning(4033, '{0} has no label:, so its first column "{1}" is taken as the label; name the label column(s), e.g. label: "{1}"'),
  HeldOutLacksClasses: warning(4034, 'the {0} split ({1}) holds no example of {2}, which training has, so its metrics say nothing of {3}{4}'),
  SoftmaxOneUnit: warning(4030, 'the last layer is a softmax over 1 unit, which always outputs 1.0, so the model cannot learn; for two classes use activation: sigmoid with loss: binary_crossentropy, or give the last layer one unit per class'),
  CheckpointMismatch: error(4020, '{0}'),
  RunUnreadable: error(4021, '{0}'),
  ModelWeightsFile: error(4023, '{0}'),
  NoHalfPrecision: error(4040, "'precision' cannot be set: TF.js has no float16 tensors (tensorflow/tfjs#4445), so netc trains in float32 only; remove this key"),
  WarmupTooLong: error(4041, 'lr_schedule {0}: warmup must be shorter than the run, or the learning rate never reaches lr: warmup {1}, the run {2}'),
  PlateauNeedsValidation: warning(4042, "lr_schedule plateau watches {0}, but there is no validation data, so it watches {1} instead; set 'validation' in the train block (e.g. validation: 0.2) to watch {0}"),
  SharedNotSharded: error(4022, "{0} is refused: a population with shared layers trains in one process, since a shared layer's one set of weights, which every member trains, has no member axis to cut into {1}; leave out {0}"),
  NoTrainingExamples: error(4052, 'there are no examples to train on: {0}'),
  NothingLeftToTrain: error(4051, 'validation ({0}) and test ({1}) add up to {2}: they would hold out all the data and leave nothing to train on; together they must be less than 1'),
  AccuracyNeedsClasses: error(4050, 'accuracy needs class predictions, but {0} is a regression loss; remove accuracy from metrics (mse and mae work with any loss) or train with a classification loss'),
  SplitTooFewExamples: error(4060, 'split: kfold({0}) cuts the training examples into {0} folds, but there are only {1}; use k <= {1}'),
  DataFileMissing: warning(4010, '{0}; its shape is not checked, and training will fail until it exists'),

  // --- data files, found while loading them (thrown as a DataError that carries file, line and column) --
  DataFileUnreadable: error(4011, 'cannot read the data file "{0}": {1}'),
  DataNotANumber: error(4012, 'column "{0}" must hold a number, got "{1}"'),
  DataMissingValue: error(4013, 'column "{0}" has no value'),
  DataFieldCount: error(4014, 'this row has {0} field(s), the header has {1}'),
  DataBadFile: error(4015, '{0}'),
  DataCountMismatch: error(4016, 'the idx files disagree: "{0}" holds {1} example(s), "{2}" holds {3} label(s)'),
  DataNoRows: error(4018, 'the csv file "{0}" has a header but no rows; it needs at least one example'),
  DataNotFloat32: error(4019, '{0} holds {1}, which is not a finite float32 (the largest is about 3.4e38): training on it would turn every weight into NaN; scale the values down'),
  DataLabelOutOfRange: error(4017, 'label {0} of example {1} (counting from 0) is not a class index{2}'),

  // --- NumPy files (npy(), npz()): found at check time from their headers, or while loading them -------
  // {0} is the array as the .net file names it: "x.npy", or "d.npz" array "x_train"
  NpyBadMagic: error(4070, '{0} is not a .npy file: {1}'),
  NpyBadHeader: error(4071, '{0} has a broken .npy header: {1}'),
  NpyFortranOrder: error(4072, '{0} is stored in Fortran order (fortran_order: True), which netc does not read; save it in C order: np.save(file, np.ascontiguousarray(array))'),
  NpyUnsupportedDtype: error(4073, '{0} holds dtype {1}, which netc does not read{2}'),
  NpyTruncated: error(4074, '{0} is truncated: {1}'),
  NpyRowMismatch: error(4075, 'x and y disagree: {0} holds {1} example(s), {2} holds {3} label(s)'),
  NpyBadShape: error(4076, '{0} has shape {1}: {2}'),
  NpyNotOneHot: error(4077, 'row {1} of {0} (counting from 0) is not one-hot: {2}'),
  NpzBadArchive: error(4078, '{0} is not a readable .npz file (a zip archive of .npy arrays): {1}'),
  NpzMissingKey: error(4079, '{0} has no array "{1}"; the arrays it holds are: {2}'),
  NpyInexactInteger: error(4080, '{0} row {1} (counting from 0) holds {2}, which float32 cannot hold exactly (it holds every whole number up to 2^24 = 16777216, past that only some); token ids must be below 2^24, and measurements may be converted with array.astype(np.float32) to be taken rounded'),

  // --- token ids (text sources, and the layers that read the model's input as token ids) ----------------
  DataTokenOutOfRange: error(4090, 'row {0} (counting from 0), step {1}: token id {2} {3}'),
  TokensPastVocabulary: error(4091, '{0} gives token ids in [0, {1}) (vocab: {1}), but {2} reads ids in [0, {3}): give the data vocab: {3} or less, or the layer a vocabulary of {1}'),
} as const satisfies Record<string, MessageDef>;

export type MessageName = keyof typeof Messages;

export function formatMessage(def: MessageDef, args: readonly (string | number)[]): string {
  return def.text.replace(/\{(\d+)\}/g, (_, i: string) => String(args[Number(i)] ?? ''));
}
