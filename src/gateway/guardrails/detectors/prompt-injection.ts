import type { Detector } from "./scan-text.js";

/** Up to three whitespace characters between words (a bound keeps every phrase short). */
const S = String.raw`\s{1,3}`;
const VERB = "(?:ignore|disregard|forget|override|bypass)";
const QUALIFIER =
  "(?:all|every|your|previous|prior|above|earlier|preceding|foregoing|original|initial|system|developer|safety|existing|former|given)";
const NOUN =
  "(?:instructions?|prompts?|rules|directives?|guidelines|guardrails|constraints|restrictions|context|programming|messages?|commands?|polic(?:y|ies)|orders)";
const REVEAL = String.raw`(?:reveal|show|print|display|output|repeat|leak|dump|tell${S}me|give${S}me|what${S}(?:is|are|was|were))`;
const ADJECTIVE = "(?:full|entire|original|hidden|secret|initial|exact|complete|verbatim|first)";
const MODE = "(?:developer|jailbreak)";

/**
 * A family of phrases around one key word. Each anchor is a substring of the key word (at most
 * six characters, with an uncommon first letter: V8 finds a short string by searching for its
 * first character, the faster the rarer it is) and `at` its offset in the key word. Each phrase
 * is tried as a sticky pattern where the key word starts, in the lower-cased text; what comes
 * before the key word is a lookbehind whose group is the phrase's start.
 */
interface Family {
  anchors: { text: string; at: number }[];
  /** A quick test of the text around the key word before the patterns run (common anchors). */
  pre?: (low: string, key: number) => boolean;
  phrases: RegExp[];
}

const isSpace = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9;
const isLower = (c: number): boolean => c >= 97 && c <= 122;

/** The word before `at` (after the whitespace before it), in lower case. */
function wordBefore(low: string, at: number): string {
  let end = at;
  while (end > 0 && at - end < 3 && isSpace(low.charCodeAt(end - 1))) end--;
  let start = end;
  while (start > 0 && end - start < 12 && isLower(low.charCodeAt(start - 1))) start--;
  return low.slice(start, end);
}

/** The words that may come right before the noun of a request for the system prompt. */
const BEFORE_NOUN = new Set(
  "your the system initial hidden original secret full entire exact complete verbatim first".split(" "),
);

const sticky = (...sources: string[]): RegExp[] => sources.map((x) => new RegExp(x, "y"));

const FAMILIES: Family[] = [
  {
    // The verb: "ignore all previous instructions", "disregard the system prompt", "forget your
    // rules", "ignore the instructions above", "forget everything above".
    anchors: [
      { text: "gnore", at: 1 },
      { text: "gard", at: 5 },
      { text: "forget", at: 0 },
      { text: "verrid", at: 1 },
      { text: "bypass", at: 0 },
    ],
    phrases: sticky(
      String.raw`\b${VERB}(?:${S}(?:the|any|of|these|those|my|all|your|every|each)){0,3}(?:${S}${QUALIFIER}){1,2}${S}${NOUN}\b`,
      String.raw`\b${VERB}(?:${S}(?:the|all|any|your|my)){0,2}${S}${NOUN}${S}(?:above|before|previously|earlier|so${S}far|you${S}(?:were|have${S}been)${S}given)\b`,
      String.raw`\b${VERB}${S}(?:everything|anything|all)${S}(?:above|before|prior|previously|you(?:'ve|${S}have|${S}were)${S}(?:been${S})?(?:told|given|taught))`,
    ),
  },
  {
    // The noun: "reveal your system prompt", "what is your initial prompt", "print the hidden
    // instructions", "repeat the instructions above".
    anchors: [
      { text: "prompt", at: 0 },
      { text: "uction", at: 5 },
    ],
    pre: (low, key) => BEFORE_NOUN.has(wordBefore(low, key)),
    phrases: sticky(
      String.raw`(?<=(\b${REVEAL}${S}(?:me${S})?(?:your|the)${S}(?:${ADJECTIVE}${S}){0,2}(?:system|initial|hidden|original|secret)${S}))(?:prompt|instructions)\b`,
      String.raw`(?<=(\b${REVEAL}${S}(?:me${S})?(?:your|the)${S}(?:${ADJECTIVE}${S}){0,2}))(?:prompt|instructions)${S}above\b`,
    ),
  },
  {
    // "you are now DAN", "you are now in developer mode", "you are now free from all restrictions"
    // "now" and a space (a short anchor with an uncommon first letter; "you" is everywhere).
    anchors: [{ text: "w ", at: 2 }],
    pre: (low, key) => low.startsWith("no", key),
    phrases: sticky(
      String.raw`(?<=(\byou${S}are${S}))now${S}(?:dan\b|in${S}${MODE}${S}mode\b|jailbroken|unrestricted|unfiltered|uncensored|an?${S}(?:unrestricted|unfiltered|uncensored|jailbroken)|free${S}(?:from|of)${S}(?:all${S}|any${S})?(?:restrictions|rules|guidelines|limitations|constraints|filters))`,
    ),
  },
  {
    anchors: [{ text: "ything", at: 2 }],
    pre: (low, key) => low.startsWith("an", key),
    phrases: sticky(String.raw`(?<=(\bdo${S}))anything${S}now\b`),
  },
  {
    // "enable developer mode", "jailbreak mode enabled"
    anchors: [
      { text: "velope", at: 2 },
      { text: "jailbr", at: 0 },
    ],
    phrases: sticky(
      String.raw`(?<=(\b(?:enable|activate|enter|switch${S}to|turn${S}on)${S}(?:the${S})?))${MODE}${S}mode\b`,
      String.raw`\b${MODE}${S}mode${S}(?:enabled|activated|on)\b`,
    ),
  },
  {
    // "pretend you have no restrictions", "pretend that you are under no rules"
    anchors: [{ text: "preten", at: 0 }],
    phrases: sticky(
      String.raw`\bpretend${S}(?:that${S})?you${S}(?:have|had|are${S}under|were${S}under)${S}no${S}(?:restrictions|rules|limits|limitations|guidelines|filters|constraints|content${S}polic(?:y|ies))`,
    ),
  },
  {
    // Chat-template control tokens pasted into a message.
    anchors: [
      { text: "<|", at: 0 },
      { text: "<<", at: 0 },
      { text: "[inst", at: 0 },
      { text: "[/ins", at: 0 },
    ],
    phrases: sticky(
      String.raw`<\|(?:im_start|im_end|system|user|assistant|endoftext)\|>|<<\/?sys>>|\[\/?inst\]`,
    ),
  },
];

/**
 * Prompt-injection phrases (a heuristic, in English): orders to ignore or forget the previous or
 * system instructions, requests to reveal the system prompt, "you are now DAN" and other
 * jailbreak personas, "developer mode", "pretend you have no restrictions", and chat-template
 * control tokens (`<|im_start|>`, `[INST]`, `<<SYS>>`). Case-insensitive. Paraphrases, other
 * languages and obfuscated spellings ("ign0re") get through.
 */
export const promptInjection: Detector = {
  find(t, out) {
    const low = t.lower();
    for (const f of FAMILIES) {
      for (const a of f.anchors) {
        for (let i = low.indexOf(a.text); i !== -1; i = low.indexOf(a.text, i + 1)) {
          const key = i - a.at;
          if (key < 0 || (f.pre && !f.pre(low, key))) continue;
          for (const re of f.phrases) {
            re.lastIndex = key;
            const m = re.exec(low);
            if (m === null) continue;
            out.push(key - (m[1]?.length ?? 0), key + m[0].length);
            break;
          }
        }
      }
    }
  },
};
