"""The "smart" approval mode's judge: a short second model call on a flagged command.

Its only power is to approve or deny without asking; anything but a clear one-word
answer (an error, a timeout, a ramble) means "ask the person", which is the gate's rule.
"""

from __future__ import annotations

from seam.contracts.guardrail import Classification, Judge, JudgeVerdict
from seam.contracts.messages import Message
from seam.contracts.model import ModelProvider, ModelRequest, TextChunk
from seam.wiring.settings import Settings

JUDGE_PROMPT = (
    "You review shell commands an AI agent wants to run on a person's computer. Reply with"
    " exactly one word: APPROVE if the command is clearly harmless in context, DENY if it"
    " could destroy data, leak secrets or damage the system, ASK if unsure."
)
# The one-word answers that decide alone; any other word means "ask".
_VERDICTS: dict[str, JudgeVerdict] = {"approve": "approve", "deny": "deny"}


def model_judge(model: ModelProvider) -> Judge:
    async def judge(command: str, found: Classification) -> JudgeVerdict:
        request = ModelRequest(
            system=JUDGE_PROMPT,
            messages=(Message("user", f"Command: {command}\nFlagged because: {found.reason}"),),
            tool_choice="none",
            max_tokens=4,
            temperature=0.0,
        )
        text = ""
        async for chunk in model.stream(request):
            if isinstance(chunk, TextChunk):
                text += chunk.text
        words = text.strip().split()
        word = words[0].strip(".!,:").lower() if words else ""
        return _VERDICTS.get(word, "ask")

    return judge


def lazy_judge(settings: Settings) -> Judge:
    """The judge on the `approvals` side model, built on first use (most sessions never
    use "smart" mode, and building a model can fail: then the gate asks the person)."""
    built: list[Judge] = []

    async def judge(command: str, found: Classification) -> JudgeVerdict:
        if not built:
            from seam.wiring.models import ModelFactory

            built.append(model_judge(ModelFactory(settings).side("approvals")))
        return await built[0](command, found)

    return judge
