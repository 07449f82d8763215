/**
 * BYOK provider slugs the SDK knows (docs/wire-compatibility.md "BYOK keys"); the catalog's own slugs
 * are accepted too. Separated by whitespace: a line must end between two slugs, never at a slug's hyphen
 * ("black-forest-labs" was split into "black-forest-" and "labs", and refused).
 */
export const BYOK_PROVIDER_SLUGS: ReadonlySet<string> = new Set(
  `ai21 aion-labs akashml alibaba amazon-bedrock amazon-bedrock/claude-on-aws amazon-nova ambient
anthropic anthropic/2 arcee-ai assemblyai atlas-cloud avian azure baidu baseten
black-forest-labs byteplus cerebras chutes cirrascale clarifai claude-on-aws cloudflare cohere
coreweave cosine crusoe darkbloom databricks decart deepgram deepinfra deepseek dekallm
digitalocean featherless fireworks fish-audio friendli gmicloud google-ai-studio google-vertex
groq heygen inception inceptron inferact-vllm inference-net infermatic inflection io-net
ionstream krea liquid makora mancer mara meta minimax mistral modal modelrun modular moonshotai
morph near-ai nebius nex-agi nextbit novita nvidia ollama open-inference openai parasail
perceptron perplexity phala poolside primeintellect quiver recraft reka relace runway
sail-research sakana sakana-ai sambanova seed siliconflow sourceful stepfun streamlake
switchpoint tencent tenstorrent thinkingmachines together typesafe unbiased upstage venice
voyageai wafer wandb wandb-legacy xai xiaomi z-ai`.split(/\s+/),
);
