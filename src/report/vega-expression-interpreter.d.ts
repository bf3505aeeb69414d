// Types of the vendored vega-interpreter (see vega-expression-interpreter.js): the same shape as upstream's.
import type { expressionInterpreter as upstream } from 'vega-interpreter';

export declare const expressionInterpreter: typeof upstream;
