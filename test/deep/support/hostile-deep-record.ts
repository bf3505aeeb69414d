import type { DeepRecord } from '../../../src/deep/index.ts';

const xssScript = '<script>window.__xss = "script"</script>';
const xssImg = `<img src=x onerror="window.__xss = 'img'">`;
const xssSvg = `<svg onload="window.__xss = 'svg'">`;
const jsLink = '[click](javascript:alert(1))';

/** The record with hostile text wherever a model or the data writes. */
export function hostile(record: DeepRecord): DeepRecord {
  const [first, ...rest] = record.evidence;
  const [section, ...sections] = record.sections;
  const [sub, ...subs] = record.subAnalyses;
  if (first === undefined || section === undefined || sub === undefined || record.brief === null)
    throw new Error('fixture too small');
  return {
    ...record,
    question: `Report ${xssScript}`,
    brief: {
      ...record.brief,
      questions: record.brief.questions.map((entry) => ({ ...entry, tables: [...entry.tables, xssSvg] })),
      goodAnswer: xssImg,
    },
    evidence: [{ ...first, claim: `${first.claim} ${xssScript} ${xssImg} ${jsLink}` }, ...rest],
    sections: [
      {
        ...section,
        title: `${section.title} ${xssSvg}`,
        markdown: `${section.markdown}\n\n${xssImg}\n\n${jsLink} and [EV999] ![tracker](https://tracker.example/pixel.png)`,
      },
      ...sections,
    ],
    subAnalyses: [
      { ...sub, question: `${sub.question} ${xssScript}`, tables: [...sub.tables, xssImg] },
      ...subs,
    ],
  };
}
