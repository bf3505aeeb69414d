import type { OfflineAnalystStage } from '../agent/offline-analyst/index.ts';

/**
 * What a question asks for, read by rules (the offline deep analysis has no
 * language model): the kinds of finding it names — change over time,
 * comparisons between groups, relations between columns, how clean the data
 * is, values that stand out, how values are distributed — and its own words,
 * which may name columns. The offline roles keep, order and place the
 * findings that match first, so that a question is answered by the findings
 * it asked for rather than by a fixed ranking of the analyst's steps.
 *
 * Why not the single run's rules: the offline analyst's plan
 * (`src/agent/offline-analyst/plan.ts`) runs every step whatever the question
 * (it maps no question to steps); the one rule that reads the question, the
 * column matcher (`column-match.ts`), is not among the agent's public exports,
 * and the deep analysis imports only those. The findings name their columns
 * in backticks, so matching the question's words against a finding's text
 * finds the same columns without it.
 */

export type QuestionKind = 'time' | 'comparison' | 'relation' | 'quality' | 'outliers' | 'distribution';

interface KindRule {
  kind: QuestionKind;
  /** Words of a question that ask for it. */
  asks: RegExp;
  /** The analyst's steps whose findings are of this kind. */
  stages: readonly OfflineAnalystStage[];
  /** Findings of another step that are of this kind too, by what they say. */
  says: RegExp;
  /** The finding that answers it most directly (a trend's change, a day that stands out): ranked first. */
  core: RegExp;
  /** The outline's section for it. */
  title: string;
  /** "What the sub-analyses printed about …". */
  about: string;
}

// In the order a report answers them when a question names several at one place.
const rules: readonly KindRule[] = [
  {
    kind: 'quality',
    asks: /\b(clean\w*|quality|messy|dirty|tidy|missing|nulls?|blanks?|empty|duplicat\w*|errors?|invalid|valid\w*|consisten\w*|inconsisten\w*|encod\w*|malformed|broken|corrupt\w*|damaged|readable|unreadable|be read|read them)\b/i,
    // The overview's and the load step's findings are of it when they say so (missing values, a reading
    // note), not all of them: "`visits` ranges from …" is the data's shape, not its cleanliness.
    stages: ['load-fallback'],
    says: /\b(missing|misses|duplicat\w*|could not be read|not UTF-8|decoded as|preamble|footer|hidden|header is row|header cells|ends with a delimiter|empty last column|single value|misread|kept as text|not a|damaged)\b/i,
    core: /\b(misses \d|not UTF-8|preamble|hidden|footer|could not be read)\b/i,
    title: 'How clean the data is',
    about: 'how clean the data is and how it was read',
  },
  {
    kind: 'time',
    asks: /\b(trends?|trending|grow|grows|growing|growth|grew|increas\w*|decreas\w*|declin\w*|rise|rising|rose|fall|falling|fell|over time|time series|seasonal\w*|seasons?|weekly|weekdays?|weekends?|weeks?|daily|monthly|months?|yearly|annual\w*|years?|quarter\w*|since|pattern|patterns|(?:19|20)\d\d)\b/i,
    stages: ['time'],
    says: /\b(spans \d{4}-|runs from \d{4}-|weekly|by weekday|by calendar month|per month|per week|per day)\b/i,
    core: /\bwent from\b.*\bchange\)/,
    title: 'Over time: trend and patterns',
    about: 'the trend and the patterns over time',
  },
  {
    kind: 'comparison',
    asks: /\b(compar\w*|versus|vs|differ\w*|difference\w*|between|split|splits|breakdown|break down|highest|lowest|most|least|best|worst|fastest|slowest|largest|smallest|top|bottom|rank\w*|drives?|driv\w*|segments?|groups?|categor\w*|share)\b/i,
    stages: ['categories', 'focus'],
    says: /\b(differs by|by `|by weekday|by calendar month|highest|lowest|largest|brings the|the top ones)\b/i,
    core: /\b(differs by|brings the largest)\b/,
    title: 'How the groups compare',
    about: 'how the groups compare',
  },
  {
    kind: 'relation',
    asks: /\b(correlat\w*|relat\w*|relationships?|associat\w*|go together|goes together|depend\w*|affects?|affected|impact\w*|influenc\w*|links?|linked|connect\w*|effects?|predict\w*|drives?|driv\w*|explain\w*)\b/i,
    stages: ['correlations', 'relations'],
    says: /\b(correlated|r = |eta squared|joined|go together)\b/i,
    core: /\bcorrelated \(r = /,
    title: 'What goes with what',
    about: 'what goes with what',
  },
  {
    kind: 'outliers',
    asks: /\b(outliers?|unusual|anomal\w*|odd|strange|extreme\w*|spikes?|stands? out|do not fit|does not fit|don't fit|doesn't fit|abnormal|irregular\w*|surpris\w*|weird)\b/i,
    stages: ['outliers'],
    says: /\b(stands out|outside the IQR|most extreme|robust z-score)\b/i,
    core: /\bstands out\b/,
    title: 'Values that stand out',
    about: 'the values that stand out',
  },
  {
    kind: 'distribution',
    asks: /\b(distribut\w*|spread|skew\w*|ranges?|typical|averages?|mean|median|histograms?|variance|variation)\b/i,
    stages: ['distributions'],
    says: /\b(skewed|ranges from)\b/i,
    core: /\bskewed\b/,
    title: 'How the values are distributed',
    about: 'how the values are distributed',
  },
];

// Words that say what to do rather than what about: they name no column and no finding.
const taskWords = new Set(
  (
    'a an the and or but of to in on at for from with by per into over under about as is are was were be been ' +
    'do does did done it its this that these those there their them they what which who whom how why when ' +
    'where whether if any each every all some me my we our you your i tell show find give describe generate ' +
    'make report analysis analyse analyze data dataset datasets file files table tables column columns row ' +
    'rows value values please can could would should will shall may might must have has had not no yes ' +
    'than then also just only more less much many like look see answer question science summary overview ' +
    'contain contains containing fit fits one two three'
  ).split(' '),
);

function singular(word: string): string {
  if (word.length <= 3 || word.endsWith('ss')) return word;
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (/(?:ch|sh|x)es$/.test(word)) return word.slice(0, -2);
  return word.endsWith('s') ? word.slice(0, -1) : word;
}

/** A name or word as compared: lower case, letters and digits only, singular. */
function normalized(text: string): string {
  return singular(text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ''));
}

function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0);
}

/** What a question asks for. */
export interface QuestionFocus {
  /** The kinds it asks for, in the order it names them. */
  kinds: QuestionKind[];
  /** Its words that may name a column or appear in a finding (not the task's words), normalized. */
  words: string[];
  /** Its words and two- and three-word phrases, joined and normalized ("unit price" → `unitprice`). */
  names: Set<string>;
  /** Years it names (2023). */
  years: number[];
}

/** Reads a question: the kinds it asks for, in the order it names them, and its words. */
export function questionFocus(question: string): QuestionFocus {
  const positions = rules.flatMap((rule) => {
    const match = rule.asks.exec(question);
    return match === null ? [] : [{ kind: rule.kind, at: match.index }];
  });
  positions.sort((a, b) => a.at - b.at);
  const all = wordsOf(question);
  const words = [
    ...new Set(
      all
        .filter((word) => !taskWords.has(word) && word.length >= 3 && !/^\d+$/.test(word))
        .map((word) => singular(word)),
    ),
  ];
  const names = new Set<string>();
  for (let index = 0; index < all.length; index += 1) {
    for (let length = 1; length <= 3 && index + length <= all.length; length += 1) {
      const phrase = all.slice(index, index + length);
      if (length === 1 && taskWords.has(phrase[0] ?? '')) continue;
      names.add(normalized(phrase.join('')));
    }
  }
  const years = [...new Set([...question.matchAll(/\b((?:19|20)\d\d)\b/g)].map((match) => Number(match[1])))];
  return { kinds: positions.map((entry) => entry.kind), words, names, years };
}

/** The kinds of finding a finding is: by the step that printed it, and by what it says. */
export function findingKinds(claim: string, stage: OfflineAnalystStage): QuestionKind[] {
  return rules
    .filter((rule) => rule.stages.includes(stage) || rule.says.test(claim))
    .map((rule) => rule.kind);
}

/** Whether a finding says it is of this kind (whichever step printed it). */
export function saysKind(kind: QuestionKind, claim: string): boolean {
  return rules.find((rule) => rule.kind === kind)?.says.test(claim) === true;
}

/**
 * The kind of section a finding goes to: the first kind the question asks for that the finding says it
 * is ("2023-03-14 stands out", printed by the time step, is a value that stands out), else the first
 * asked kind of the step that printed it; null when it is none the question asks for.
 */
export function askedKindOf(
  focus: QuestionFocus,
  claim: string,
  stage: OfflineAnalystStage,
): QuestionKind | null {
  const said = focus.kinds.find((kind) => saysKind(kind, claim));
  if (said !== undefined) return said;
  return focus.kinds.find((kind) => rules.find((rule) => rule.kind === kind)?.stages.includes(stage)) ?? null;
}

/** The names a finding gives in backticks (columns, tables), normalized; file names left out. */
function namesIn(claim: string): string[] {
  return [...claim.matchAll(/`([^`]+)`/g)]
    .map((match) => match[1] ?? '')
    .filter((name) => !/\.\w{2,5}\b/.test(name))
    .map(normalized)
    .filter((name) => name.length > 0);
}

/**
 * How much a finding answers the question: for each kind asked, 3 when the finding says it is of that
 * kind, 2 when only the step that printed it is, 4 more when it answers that kind most directly (a
 * trend's change, a day that stands out); 2 for each column the question names that it names; 1
 * for each other word of the question it says. 0: it answers nothing asked (every finding of a question
 * that asks for nothing in particular).
 */
export function relevance(focus: QuestionFocus, claim: string, stage: OfflineAnalystStage): number {
  const kinds = focus.kinds.reduce((sum, kind) => {
    const rule = rules.find((entry) => entry.kind === kind);
    if (rule === undefined) return sum;
    const core = rule.core.test(claim) ? 4 : 0;
    if (rule.says.test(claim)) return sum + 3 + core;
    return rule.stages.includes(stage) ? sum + 2 + core : sum;
  }, 0);
  const named = namesIn(claim);
  const columns = named.filter((name) => focus.names.has(name)).length;
  const said = new Set(wordsOf(claim.replace(/`[^`]*`/g, ' ')).map(singular));
  const words = focus.words.filter((word) => said.has(word) && !named.includes(word)).length;
  return kinds + 2 * columns + words;
}

/** The words of the question that no finding says or names: what it asks may be unanswered. */
export function unmentionedWords(focus: QuestionFocus, claims: readonly string[]): string[] {
  const said = new Set(claims.flatMap((claim) => wordsOf(claim).map(singular)));
  // A column's name may hold the word ("unit" in `unit_price`); a word of the text must be it.
  const names = claims.flatMap(namesIn);
  const cue = (word: string) => rules.some((rule) => rule.asks.test(word));
  return focus.words.filter(
    (word) => !said.has(word) && !names.some((name) => name.includes(word)) && !cue(word),
  );
}

export function kindTitle(kind: QuestionKind): string {
  return rules.find((rule) => rule.kind === kind)?.title ?? kind;
}

export function kindAbout(kind: QuestionKind): string {
  return rules.find((rule) => rule.kind === kind)?.about ?? kind;
}

/** The kind whose section has this title, or null. */
export function kindOfTitle(title: string): QuestionKind | null {
  return rules.find((rule) => rule.title === title)?.kind ?? null;
}
