import { eachMatch, windowedMatches, type Detector } from "./scan-text.js";

/** Up to three whitespace characters between words (a bound keeps every phrase in its window). */
const S = String.raw`\s{1,3}`;
const VERB = "(?:ignore|disregard|forget|override|bypass)";
const QUALIFIER =
  "(?:all|every|your|previous|prior|above|earlier|preceding|foregoing|original|initial|system|developer|safety|existing|former|given)";
const NOUN =
  "(?:instructions?|prompts?|rules|directives?|guidelines|guardrails|constraints|restrictions|context|programming|messages?|commands?|polic(?:y|ies)|orders)";
const MODE = "(?:developer|jailbreak)";

/**
 * The phrases, in lower case, in families: each family's phrases hold one of its anchors, no more
 * than `back` characters after the phrase's start and `fwd` before its end. An anchor is at most
 * six characters (V8 finds such a string by searching for its first character, quickly when that
 * is uncommon; a longer one takes longer).
 */
const FAMILIES: { anchors: string[]; back: number; fwd: number; phrases: string[] }[] = [
  {
    anchors: ["gnore", "gard", "forget", "verrid", "bypass"],
    back: 6,
    fwd: 140,
    phrases: [
      // "ignore all previous instructions", "disregard the system prompt", "forget your rules"
      String.raw`\b${VERB}(?:${S}(?:the|any|of|these|those|my|all|your|every|each)){0,3}(?:${S}${QUALIFIER}){1,2}${S}${NOUN}\b`,
      // "ignore the instructions above", "disregard all rules you were given"
      String.raw`\b${VERB}(?:${S}(?:the|all|any|your|my)){0,2}${S}${NOUN}${S}(?:above|before|previously|earlier|so${S}far|you${S}(?:were|have${S}been)${S}given)\b`,
      // "forget everything above", "ignore everything you were told"
      String.raw`\b${VERB}${S}(?:everything|anything|all)${S}(?:above|before|prior|previously|you(?:'ve|${S}have|${S}were)${S}(?:been${S})?(?:told|given|taught))`,
    ],
  },
  {
    anchors: ["prompt", "uction"],
    back: 100,
    fwd: 20,
    phrases: [
      // "reveal your system prompt", "what is your initial prompt", "print the hidden instructions"
      String.raw`\b(?:reveal|show|print|display|output|repeat|leak|dump|tell${S}me|give${S}me|what${S}(?:is|are|was|were))${S}(?:me${S})?(?:your|the)${S}(?:(?:full|entire|original|hidden|secret|initial|exact|complete|verbatim|first)${S}){0,2}(?:system${S}(?:prompt|instructions)|(?:initial|hidden|original|secret)${S}(?:prompt|instructions)|(?:prompt|instructions)${S}above)`,
    ],
  },
  {
    anchors: ["you ar"],
    back: 0,
    fwd: 110,
    phrases: [
      // "you are now DAN", "you are now in developer mode", "you are now free from all restrictions"
      String.raw`\byou${S}are${S}now${S}(?:dan\b|in${S}${MODE}${S}mode|jailbroken|unrestricted|unfiltered|uncensored|an?${S}(?:unrestricted|unfiltered|uncensored|jailbroken)|free${S}(?:from|of)${S}(?:all${S}|any${S})?(?:restrictions|rules|guidelines|limitations|constraints|filters))`,
    ],
  },
  { anchors: ["ything"], back: 12, fwd: 14, phrases: [String.raw`\bdo${S}anything${S}now\b`] },
  {
    anchors: ["velope", "jailbr"],
    back: 40,
    fwd: 36,
    phrases: [
      // "enable developer mode", "jailbreak mode enabled"
      String.raw`\b(?:enable|activate|enter|switch${S}to|turn${S}on)${S}(?:the${S})?${MODE}${S}mode\b|\b${MODE}${S}mode${S}(?:enabled|activated|on)\b`,
    ],
  },
  {
    anchors: ["preten"],
    back: 2,
    fwd: 120,
    phrases: [
      // "pretend you have no restrictions", "pretend that you are under no rules"
      String.raw`\bpretend${S}(?:that${S})?you${S}(?:have|had|are${S}under|were${S}under)${S}no${S}(?:restrictions|rules|limits|limitations|guidelines|filters|constraints|content${S}polic(?:y|ies))`,
    ],
  },
  {
    anchors: ["<|", "<<", "[inst", "[/ins"],
    back: 0,
    fwd: 16,
    // Chat-template control tokens pasted into a message.
    phrases: [String.raw`<\|(?:im_start|im_end|system|user|assistant|endoftext)\|>|<<\/?sys>>|\[\/?inst\]`],
  },
];

const COMPILED = FAMILIES.map((f) => ({
  anchors: f.anchors,
  // One character more on each side, so that `\b` at a window's edge sees its neighbour.
  back: f.back + 1,
  fwd: f.fwd + 1,
  re: new RegExp(f.phrases.join("|"), "g"),
}));
const ANY_CASE = new RegExp(FAMILIES.flatMap((f) => f.phrases).join("|"), "gi");

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
    if (low === null) eachMatch(ANY_CASE, t.text, (m) => out.push(m.index, m.index + m[0].length));
    else for (const f of COMPILED) windowedMatches(low, f.anchors, f.back, f.fwd, f.re, out);
  },
};
