// An extension for pi's own CLI in the tests: registers pi-ai's faux provider as `faux/faux-1`,
// answering every prompt with FAUX_ANSWER, so that print mode (`pi -p`) runs without a network.

import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider } from "@earendil-works/pi-ai";

export const FAUX_ANSWER = "the faux model's answer";

export default function fauxModel(pi: ExtensionAPI): void {
  const faux = fauxProvider();
  faux.setResponses(Array.from({ length: 10 }, () => fauxAssistantMessage(FAUX_ANSWER)));
  pi.registerProvider(faux.provider);
}
