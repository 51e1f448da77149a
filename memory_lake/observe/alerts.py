"""The health alerts' words: one entry per alert code, in English and in the seed's Chinese.

Every alert is ``{"level", "code", "message", "action"}``: `code` is stable (machines and the patrol
read it), `message` says what is wrong with the numbers, `action` names the command that deals with
it. The language is the policy's ``[report] language`` (``en`` by default, ``zh`` for the seed's
wording: 工作记忆使用率 90%，建议晋升到短期). Only the words change; the numbers and codes do not.
"""

from __future__ import annotations

from typing import Any

LANGUAGES = ("en", "zh")

# code -> level, {language: (message, action)}; the templates take the alert's numbers by name.
ALERTS: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "working_capacity": ("warning", {
        "en": ("working memory at {utilization:.0%} of capacity ({used}/{limit}){scopes}",
               "memory-lake patrol moves the oldest working memories to short_term until {target:.0%} "
               "(--dry-run shows which)"),
        "zh": ("工作记忆使用率 {utilization:.0%}（{used}/{limit}），建议晋升到短期{scopes}",
               "memory-lake patrol：最旧的工作记忆移到短期，直到 {target:.0%}（--dry-run 先看会移哪些）"),
    }),
    "short_term_capacity": ("warning", {
        "en": ("short_term memory at {utilization:.0%} of capacity ({used}/{limit}){scopes}",
               "memory-lake patrol consolidates the oldest short_term memories to long_term until {target:.0%} "
               "(--dry-run shows which)"),
        "zh": ("短期记忆使用率 {utilization:.0%}（{used}/{limit}），建议归档到长期{scopes}",
               "memory-lake patrol：最旧的短期记忆移到长期，直到 {target:.0%}（--dry-run 先看会移哪些）"),
    }),
    # the lake as a whole is below the threshold, some of its scopes are not
    "working_capacity_scopes": ("warning", {
        "en": ("{scopes} scope(s) with working memory above {threshold:.0%} of capacity",
               "memory-lake patrol moves their oldest working memories to short_term until {target:.0%}"),
        "zh": ("{scopes} 个范围的工作记忆使用率超过 {threshold:.0%}，建议晋升到短期",
               "memory-lake patrol：这些范围最旧的工作记忆移到短期，直到 {target:.0%}"),
    }),
    "short_term_capacity_scopes": ("warning", {
        "en": ("{scopes} scope(s) with short_term memory above {threshold:.0%} of capacity",
               "memory-lake patrol consolidates their oldest short_term memories to long_term until {target:.0%}"),
        "zh": ("{scopes} 个范围的短期记忆使用率超过 {threshold:.0%}，建议归档到长期",
               "memory-lake patrol：这些范围最旧的短期记忆移到长期，直到 {target:.0%}"),
    }),
    "hit_rate_low": ("warning", {
        "en": ("7-day hit rate {rate:.0%} is below {threshold:.0%} ({searches})",
               "search in hybrid mode (memory-lake search QUERY --mode hybrid, the default; the HTTP and MCP "
               "services use it too) and archive stale memories (see the stale alert)"),
        "zh": ("命中率（7天）{rate:.0%}，低于 {threshold:.0%}（{searches}），建议切换为 hybrid 检索模式",
               "使用 hybrid 检索（memory-lake search QUERY --mode hybrid，默认即是），并清理陈旧记忆"),
    }),
    "hit_rate_low_scopes": ("warning", {
        "en": ("{scopes} scope(s) with a 7-day hit rate below {threshold:.0%}: their agents rarely find what they "
               "search for",
               "memory-lake sql \"SELECT tenant, agent_id, user_id, message FROM health_alerts WHERE code = 'hit_rate_low' "
               "AND as_of = (SELECT max(as_of) FROM health_alerts)\" names them; search them in hybrid mode "
               "(memory-lake search QUERY --tenant T --user U --mode hybrid) and archive their stale memories"),
        "zh": ("{scopes} 个范围的命中率（7天）低于 {threshold:.0%}，建议切换为 hybrid 检索模式",
               "memory-lake sql \"SELECT tenant, agent_id, user_id, message FROM health_alerts WHERE code = 'hit_rate_low' "
               "AND as_of = (SELECT max(as_of) FROM health_alerts)\" 列出这些范围；用 hybrid 检索并清理陈旧记忆"),
    }),
    "stale_ratio_scopes": ("info", {
        "en": ("{scopes} scope(s) with more than {threshold:.0%} of their memories not accessed for {days} days",
               "memory-lake sql \"SELECT tenant, agent_id, user_id, message FROM health_alerts WHERE code = 'stale_ratio' "
               "AND as_of = (SELECT max(as_of) FROM health_alerts)\" names them; review their memories for archiving"),
        "zh": ("{scopes} 个范围的陈旧率超过 {threshold:.0%}（{days} 天未访问），建议归档",
               "memory-lake sql \"SELECT tenant, agent_id, user_id, message FROM health_alerts WHERE code = 'stale_ratio' "
               "AND as_of = (SELECT max(as_of) FROM health_alerts)\" 列出这些范围；逐条检查是否归档"),
    }),
    "stale_ratio": ("info", {
        "en": ("{count} memories not accessed for {days} days ({ratio:.0%}, above {threshold:.0%})",
               "review them for archiving: memory-lake sql \"SELECT id, tier, last_accessed_at FROM memories "
               "WHERE status = 'active' ORDER BY last_accessed_at LIMIT 50\"; archive one with memory-lake edit ID "
               "--set expires_at=YYYY-MM-DD"),
        "zh": ("{count} 条记忆 {days} 天未访问（陈旧率 {ratio:.0%}，超过 {threshold:.0%}），建议归档",
               "逐条检查：memory-lake sql \"SELECT id, tier, last_accessed_at FROM memories WHERE status = 'active' "
               "ORDER BY last_accessed_at LIMIT 50\"；归档：memory-lake edit ID --set expires_at=YYYY-MM-DD"),
    }),
    "important_changed": ("info", {
        "en": ("{count} change(s) to important memories since the last snapshot",
               "review the audit trail: memory-lake sql \"SELECT * FROM memory_history WHERE before.tier = "
               "'important' ORDER BY as_of DESC\""),
        "zh": ("重要记忆被修改 {count} 次（自上次快照），已记录审计",
               "查看审计记录：memory-lake sql \"SELECT * FROM memory_history WHERE before.tier = 'important' "
               "ORDER BY as_of DESC\""),
    }),
    "important_conflicts": ("info", {
        "en": ("important memory modified: {count} agent change(s) to important memories wait for a user",
               "memory-lake conflicts list; resolve with memory-lake conflicts resolve ID --take lake|incoming|both"),
        "zh": ("重要记忆被修改：{count} 处 Agent 改动等待用户裁决",
               "memory-lake conflicts list；裁决：memory-lake conflicts resolve ID --take lake|incoming|both"),
    }),
    "conflicts_waiting": ("info", {
        "en": ("{count} open conflict(s) wait for a user (oldest {oldest} days)",
               "memory-lake conflicts list, then memory-lake conflicts resolve ID --take lake|incoming|both|value=TEXT"),
        "zh": ("{count} 个冲突等待用户裁决（最早 {oldest} 天前）",
               "memory-lake conflicts list，然后 memory-lake conflicts resolve ID --take lake|incoming|both|value=TEXT"),
    }),
    "conflicts_overdue": ("warning", {
        "en": ("{count} conflict(s) open for {days} days or more (oldest {oldest} days): agents read the "
               "lake's value meanwhile",
               "memory-lake conflicts list (oldest first), then memory-lake conflicts resolve ID "
               "--take lake|incoming|both|value=TEXT"),
        "zh": ("{count} 个冲突已 {days} 天或更久未裁决（最早 {oldest} 天前），期间 Agent 读取的是库中原值",
               "memory-lake conflicts list（最早的在前），然后 memory-lake conflicts resolve ID "
               "--take lake|incoming|both|value=TEXT"),
    }),
    "suggest_archive": ("info", {
        "en": ("{count} long-term memories not used for {days} days",
               "review them (memory-lake sql \"SELECT * FROM memory_flags\"), then archive one (memory-lake edit ID "
               "--set expires_at=YYYY-MM-DD: the next run archives it), forget it (memory-lake forget ID --reason "
               "TEXT) or keep it"),
        "zh": ("{count} 条长期记忆 {days} 天未引用，提示归档或遗忘",
               "检查（memory-lake sql \"SELECT * FROM memory_flags\"），归档（memory-lake edit ID --set "
               "expires_at=YYYY-MM-DD，下次运行归档）、遗忘（memory-lake forget ID --reason TEXT）或保留"),
    }),
    "dormant_scopes": ("warning", {
        "en": ("{scopes} scope(s) hold no live memory, only {dormant} dormant ones (unused for {days} days): "
               "search, the context pack and the export give them nothing",
               "memory-lake search QUERY --tenant T --user U --include-inactive to see them; "
               "memory-lake restore ID... brings them back (a use or a write wakes a dormant one)"),
        "zh": ("{scopes} 个范围没有活跃记忆，只有 {dormant} 条休眠记忆（{days} 天未使用）：检索、上下文包和导出都拿不到",
               "memory-lake search QUERY --tenant T --user U --include-inactive 查看；memory-lake restore ID... 恢复"),
    }),
    "summaries_failed": ("warning", {
        "en": ("{count} summar{ies} failed the quality gate ({failed}): not published, the previous one stays",
               "memory-lake summarize --tenant T --json shows each summary's scores and missing facts"),
        "zh": ("{count} 份摘要未通过质量门槛（{failed}）：未发布，保留上一版",
               "memory-lake summarize --tenant T --json 查看各摘要的得分与缺失信息"),
    }),
    "quarantine_growing": ("warning", {
        "en": ("quarantine grew at each of the last {runs} runs ({series} open lines): an agent keeps "
               "writing lines that fail the contract",
               "memory-lake quarantine list shows file, line and reason; fix the agent, then "
               "memory-lake quarantine export / replay"),
        "zh": ("隔离区连续 {runs} 次运行增长（{series} 行未处理）：有 Agent 持续写入不合规的数据",
               "memory-lake quarantine list 查看文件、行号与原因；修好 Agent 后 memory-lake quarantine export / replay"),
    }),
    "run_overdue": ("warning", {
        "en": ("no successful nightly run for {hours} hours (the last was as of {last}; the schedule is daily)",
               "memory-lake sql \"SELECT run_id, as_of, status FROM runs ORDER BY as_of DESC LIMIT 5\"; check the "
               "worker (memory-lake serve-flows) or run it now: memory-lake run nightly"),
        "zh": ("已 {hours} 小时没有成功的夜间运行（上次为 {last}；计划每天一次）",
               "memory-lake sql \"SELECT run_id, as_of, status FROM runs ORDER BY as_of DESC LIMIT 5\"；检查 worker"
               "（memory-lake serve-flows）或立即运行：memory-lake run nightly"),
    }),
    "publish_blocked": ("warning", {
        "en": ("publish blocked by {count} failed check(s): {failed}; agents keep reading {current}",
               "memory-lake publish --json names each check with what it observed; fix the data or the policy, "
               "then memory-lake publish"),
        "zh": ("发布被 {count} 项检查拦截：{failed}；Agent 继续读取 {current}",
               "memory-lake publish --json 列出每项检查及观测值；修正数据或策略后 memory-lake publish"),
    }),
    "target_failed": ("warning", {
        "en": ("publish target {name} failed: {error}",
               "memory-lake targets status; after fixing it, memory-lake targets sync {name}"),
        "zh": ("发布目标 {name} 同步失败：{error}",
               "memory-lake targets status；修复后 memory-lake targets sync {name}"),
    }),
    "scopes_held": ("warning", {
        "en": ("{count} scope(s) held at their published state by the publish gate: {names}",
               "see why with memory-lake holds list; fix the agent, or confirm the removals with "
               "memory-lake holds release TENANT [--agent A] [--user U] --reason TEXT"),
        "zh": ("{count} 个范围被发布门槛保持在已发布状态：{names}",
               "memory-lake holds list 查看原因；修好 Agent，或确认删除：memory-lake holds release TENANT "
               "[--agent A] [--user U] --reason TEXT"),
    }),
}


def make_alert(code: str, language: str = "en", **params: Any) -> dict[str, Any]:
    """The alert `code` in `language` with its numbers filled in: ``{level, code, message, action}``."""
    level, words = ALERTS[code]
    message, action = words.get(language) or words["en"]
    return {"level": level, "code": code, "message": message.format(**params), "action": action.format(**params)}


def scope_count_note(count: int, threshold: float, language: str) -> str:
    """The tail of a capacity alert naming how many scopes are above the threshold."""
    if not count:
        return ""
    if language == "zh":
        return f"；{count} 个范围超过 {threshold:.0%}"
    return f"; {count} scope(s) above {threshold:.0%}"
