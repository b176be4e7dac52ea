/**
 * The "English for agents" check: a small, documented heuristic (docs/articles.md
 * "Language check"), not a language model. A text unit fails when
 *
 * 1. it has at least 20 letters and fewer than 90% of them are ASCII letters
 *    (another script: Cyrillic, CJK, Arabic, …), or
 * 2. it has at least 12 words and either fewer than 10% of them are common English
 *    function words ("the", "and", "of", …) or common function words of other European
 *    languages (French, Spanish, German, Italian, Portuguese, Dutch) outnumber the
 *    English ones.
 *
 * Shorter units are judged by rule 1 only. Code blocks are not checked.
 */

export const ENGLISH_RULES = {
  minLettersForScript: 20,
  minAsciiLetterShare: 0.9,
  minWordsForVocabulary: 12,
  minEnglishWordShare: 0.1,
} as const;

const ENGLISH = new Set(
  ("the be to of and a in that have i it for not on with he as you do at this but his by from " +
    "they we say her she or an will my one all would there their what so up out if about who " +
    "get which go me when make can like time no just him know take into your some could them " +
    "see other than then now only its it's also over how our after well way even new want " +
    "because any these us is are was were been has had does did more most such should each " +
    "very may must here those both through between where why while same few many much own " +
    "under again being used use using uses i'm don't can't isn't there's that's let's").split(
      " ",
    ),
);

const FOREIGN = new Set(
  ("le la les des du une est et dans pour pas sur avec qui que au aux ce cette sont nous vous " +
    "ils elle mais ou où leur el los las del es y en por para con como pero más este esta son " +
    "lo se su sus der die das und ist nicht ein eine mit auf für von zu dem sich auch wir sie " +
    "ich il di che è della gli sono questo não uma com em é da dos das het een niet dat zijn " +
    "voor").split(" "),
);

interface LanguageVerdict {
  ok: boolean;
  /** Why the unit does not look like English (null when it does). */
  reason: string | null;
  letters: number;
  ascii_letter_share: number;
  words: number;
  english_word_share: number;
}

/** Judges one unit of text by the heuristic above. */
export function englishVerdict(text: string): LanguageVerdict {
  const letters = (text.match(/\p{L}/gu) ?? []).length;
  const ascii = (text.match(/[A-Za-z]/g) ?? []).length;
  const words = text.toLowerCase().match(/\p{L}+(?:'\p{L}+)?/gu) ?? [];
  let english = 0;
  let foreign = 0;
  for (const w of words) {
    if (ENGLISH.has(w)) english++;
    else if (FOREIGN.has(w)) foreign++;
  }
  const asciiShare = letters ? ascii / letters : 1;
  const englishShare = words.length ? english / words.length : 0;
  const verdict = (reason: string | null): LanguageVerdict => ({
    ok: reason === null,
    reason,
    letters,
    ascii_letter_share: Math.round(asciiShare * 1000) / 1000,
    words: words.length,
    english_word_share: Math.round(englishShare * 1000) / 1000,
  });
  if (
    letters >= ENGLISH_RULES.minLettersForScript && asciiShare < ENGLISH_RULES.minAsciiLetterShare
  ) {
    return verdict(
      `only ${Math.round(asciiShare * 100)}% of the letters are English (ASCII) letters; at least ${
        ENGLISH_RULES.minAsciiLetterShare * 100
      }% are needed`,
    );
  }
  if (words.length >= ENGLISH_RULES.minWordsForVocabulary) {
    if (englishShare < ENGLISH_RULES.minEnglishWordShare) {
      return verdict(
        `only ${Math.round(englishShare * 100)}% of the words are common English words; at least ${
          ENGLISH_RULES.minEnglishWordShare * 100
        }% are expected in English prose`,
      );
    }
    if (foreign > english) {
      return verdict(
        "common words of another language outnumber common English words",
      );
    }
  }
  return verdict(null);
}
