"""The optional LLM summariser: any OpenAI-compatible chat endpoint (``POST <base>/v1/chat/completions``),
behind the same interface as the extractive one (``summaries.summarize_sources`` calls it).

Off by default: it runs only when ``[summaries] llm_base_url`` is set (``http://host:8000`` or
``http://host:8000/v1``), with ``llm_model``; the API key is read from the environment variable
named by ``llm_api_key_env`` (never from the file) and sent as a bearer token when set. The URL is
http(s) to a host that is not link-local, also once resolved (``store.check_url``; a bad one is an
InputError naming the setting), redirects are not followed, and no message shows the URL. The call
waits at most ``llm_timeout_s``. Whatever it returns is scored by the evaluator like any summary;
an endpoint error, a timeout or an answer that fails the gate falls back to the extractive summary
(the reason is recorded), never failing a run. Only the standard library is used.
"""

from __future__ import annotations

import json
import os
import socket
import urllib.error
import urllib.request
from typing import Sequence

from ..store import InputError, Policy, check_resolved_host, check_url, within
from ..text import without_hidden_characters

SYSTEM_PROMPT = {
    "en": ("You summarise an AI agent's memories. Write Markdown: the given title line, then one section per "
           "category present, '## Events', '## Decisions', '## Lessons', '## Todos', one fact per '- ' bullet. "
           "Keep numbers, dates, times and names exactly as written; never add a fact that is not in the "
           "memories. Leave out pleasantries, chatter and repeated facts. At most {max_tokens} tokens."),
    "zh": ("你为 AI 智能体的记忆写摘要。输出 Markdown：先写给定的标题行，再按类别分节：'## 事件'、'## 决策'、'## 教训'、"
           "'## 待办'（只写有内容的类别），每条 '- ' 列表项一个事实。数字、日期、时间、人名原样保留，不得添加记忆中没有的"
           "事实。去掉寒暄、过程和重复。不超过 {max_tokens} 个 token。"),
}


# How the endpoint is named in errors and fallback reasons: by its setting, never by its URL (a URL
# can hold a token, and the reasons are stored and published).
SETTING = "[summaries] llm_base_url"
ENDPOINT = f"the LLM endpoint ({SETTING})"


class LLMError(Exception):
    """The endpoint could not give a summary (unreachable, an HTTP error, a timeout, a bad answer)."""


def chat_url(base_url: str) -> str:
    """The chat completions URL of an OpenAI-compatible base URL, with or without its ``/v1``."""
    base = base_url.rstrip("/")
    return f"{base}/chat/completions" if base.endswith("/v1") else f"{base}/v1/chat/completions"


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is an HTTP error, not followed: it could lead to a host the URL check refuses
    (the cloud metadata address) and would carry the bearer token there."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: PLR0913 - urllib's signature
        return None


_OPENER = urllib.request.build_opener(_NoRedirects)


def _read(request: urllib.request.Request, timeout_s: float) -> str:
    with _OPENER.open(request, timeout=timeout_s) as response:
        return response.read().decode("utf-8")


def summarize_llm(sources: Sequence, *, title: str, max_tokens: int, lang: str = "en",
                  policy: Policy | None = None) -> str:
    """The endpoint's Markdown summary of `sources` (``summaries.Source``, one list item each);
    LLMError when there is none."""
    settings = (policy or Policy()).summaries
    check_url(settings.llm_base_url, SETTING)  # InputError: a setting to fix, not an endpoint failure
    try:  # a name that resolves to a link-local address is refused as the address would be
        within(lambda: check_resolved_host(settings.llm_base_url, SETTING), settings.llm_timeout_s)
    except InputError as exc:
        raise LLMError(str(exc)) from None
    except TimeoutError:
        raise LLMError(f"no answer within {settings.llm_timeout_s:g} s from {ENDPOINT}") from None
    except OSError as exc:  # the name does not resolve
        raise LLMError(f"cannot reach {ENDPOINT}: {type(exc).__name__}: {exc}") from None
    lines = [f"- {s.content}" for s in sources]
    body = {
        "model": settings.llm_model,
        "temperature": 0,
        "max_tokens": max_tokens,
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT.get(lang, SYSTEM_PROMPT["en"]).format(max_tokens=max_tokens)},
            {"role": "user", "content": f"Title: {title}\n\nMemories:\n" + "\n".join(lines)},
        ],
    }
    headers = {"Content-Type": "application/json"}
    key = os.environ.get(settings.llm_api_key_env) if settings.llm_api_key_env else None
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(chat_url(settings.llm_base_url), data=json.dumps(body).encode("utf-8"),
                                     headers=headers, method="POST")
    try:
        answer = json.loads(within(lambda: _read(request, settings.llm_timeout_s), settings.llm_timeout_s))
    except urllib.error.HTTPError as exc:
        redirect = ": redirects are not followed" if 300 <= exc.code < 400 else ""
        raise LLMError(f"HTTP {exc.code} from {ENDPOINT}{redirect}") from None
    except (socket.timeout, TimeoutError):
        raise LLMError(f"no answer within {settings.llm_timeout_s:g} s from {ENDPOINT}") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, (socket.timeout, TimeoutError)):
            raise LLMError(f"no answer within {settings.llm_timeout_s:g} s from {ENDPOINT}") from None
        raise LLMError(f"cannot reach {ENDPOINT}: {reason}") from None
    except (ValueError, OSError) as exc:
        raise LLMError(f"bad answer from {ENDPOINT}: {exc}") from None
    try:
        content = answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise LLMError("the answer has no choices[0].message.content") from None
    if not isinstance(content, str) or not content.strip():
        raise LLMError("the answer's summary is empty")
    # a model's answer can carry invisible instructions (Unicode tag characters, bidi controls) that the
    # evaluator does not read and an agent's model would: they go before it is scored (issue 37.5)
    return without_hidden_characters(content).strip() + "\n"
