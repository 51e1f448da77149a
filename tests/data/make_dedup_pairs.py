"""Builds dedup_pairs.json, the labelled dedup test set (run once; the JSON is committed).

Each pair is (a, b, label, lang, kind): label ``duplicate`` (same meaning, a surface variation a
memory system really produces: case, punctuation, width, whitespace, an article or particle, a
typo, a reordered clause, a filler word, a re-extraction with a small addition), ``contradiction``
(similar text, opposite meaning: a number, time, date, weekday, negation or antonym changed) or
``different`` (related memories about different things). Every pair is labelled by its construction
below, and each base fact was written by hand.
"""

import json
import random
from pathlib import Path

EN = [
    ("User prefers dark mode in the code editor", "User prefers light mode in the code editor", "antonym"),
    ("Alice likes green tea in the morning", "Alice dislikes green tea in the morning", "antonym"),
    ("The weekly sync meeting is at 3pm on Thursday", "The weekly sync meeting is at 4pm on Thursday", "number"),
    ("Deploy the billing service on Friday after the review", "Deploy the billing service on Monday after the review", "date"),
    ("Bob has two cats named Milo and Luna", "Bob has three cats named Milo and Luna", "number"),
    ("The customer wants invoices sent by email every month", "The customer does not want invoices sent by email every month", "negation"),
    ("Carol is allergic to peanuts and avoids them", "Carol is not allergic to peanuts and avoids them", "negation"),
    ("The staging database runs in the eu-west region", "The staging database runs in the us-east region", None),
    ("Dave's flight to Berlin leaves at 7:45 on March 3", "Dave's flight to Berlin leaves at 9:15 on March 3", "number"),
    ("The team agreed to use PostgreSQL for the orders service", "The team agreed to use MySQL for the orders service", None),
    ("Remind Erin to renew the SSL certificate before June 10", "Remind Erin to renew the SSL certificate before June 20", "number"),
    ("User wants answers short and in bullet points", "User wants answers long and in bullet points", "antonym"),
    ("The support console should always show compact tables", "The support console should never show compact tables", "negation"),
    ("Frank enabled two-factor authentication on his account", "Frank disabled two-factor authentication on his account", "antonym"),
    ("The quarterly budget for marketing is 50000 dollars", "The quarterly budget for marketing is 80000 dollars", "number"),
    ("Grace prefers to be contacted by phone in the afternoon", "Grace prefers to be contacted by phone in the morning", "antonym"),
    ("The API rate limit was raised to 1000 requests per minute", "The API rate limit was raised to 2000 requests per minute", "number"),
    ("Henry is vegetarian and does not eat fish", "Henry is vegetarian and does eat fish", "negation"),
    ("The office is open on Saturday from 9 to 12", "The office is closed on Saturday from 9 to 12", "antonym"),
    ("Ivy approved the vendor contract for the data platform", "Ivy rejected the vendor contract for the data platform", "antonym"),
    ("The nightly backup job starts at 2am UTC", "The nightly backup job starts at 3am UTC", "number"),
    ("Jack's daughter starts school in September", "Jack's daughter starts school in October", "date"),
    ("The project deadline moved to the end of April", "The project deadline moved to the end of May", "date"),
    ("Kate likes hiking with her dog on weekends", "Kate hates hiking with her dog on weekends", "antonym"),
    ("Use the old pricing page for enterprise customers", "Use the new pricing page for enterprise customers", "antonym"),
    ("Leo wants the report delivered every Monday morning", "Leo wants the report delivered every Wednesday morning", "date"),
    ("The cache TTL for product pages is 300 seconds", "The cache TTL for product pages is 600 seconds", "number"),
    ("Mia can attend the conference in person", "Mia cannot attend the conference in person", "negation"),
    ("The mobile app supports offline mode", "The mobile app supports online mode", "antonym"),
    ("Nora takes her coffee with milk and sugar", "Nora takes her coffee without milk and sugar", "antonym"),
    ("The CI pipeline should run the slow tests nightly", "The CI pipeline should run the fast tests nightly", "antonym"),
    ("Oscar moved to the Lisbon office last year", "Oscar moved to the Madrid office last year", None),
    ("The refund policy allows returns within 30 days", "The refund policy allows returns within 14 days", "number"),
    ("Paul is the owner of the search indexing service", "Paul is the owner of the billing reconciliation service", None),
    ("The client prefers meetings before noon", "The client prefers meetings after noon", "antonym"),
    ("Quinn's password manager is shared with the family", "Quinn's password manager is not shared with the family", "negation"),
    ("The warehouse team works the early shift", "The warehouse team works the late shift", "antonym"),
    ("Rita wants notifications muted during weekends", "Rita wants notifications muted during weekdays", None),
    ("The new laptop has 32 GB of memory", "The new laptop has 16 GB of memory", "number"),
    ("Sam is allowed to access the production logs", "Sam is denied access to the production logs", "antonym"),
    ("The demo for the investors went well on Tuesday", "The demo for the investors went badly on Tuesday", None),
    ("Tina's birthday is on August 14", "Tina's birthday is on August 24", "number"),
]
ZH = [
    ("用户偏好深色模式", "用户偏好浅色模式", "antonym"),
    ("张伟喜欢喝绿茶，不加糖", "张伟讨厌喝绿茶，不加糖", "antonym"),
    ("每周例会定在周四下午三点", "每周例会定在周四下午四点", "number"),
    ("项目截止日期是下周五", "项目截止日期是下周三", "date"),
    ("李娜对花生过敏", "李娜对花生不过敏", "negation"),
    ("客户希望每月通过邮件收到发票", "客户希望每月通过电话收到发票", "antonym"),
    ("王强的航班早上八点起飞", "王强的航班晚上八点起飞", "antonym"),
    ("周末不要发送工作通知", "周末可以发送工作通知", "negation"),
    ("生产数据库部署在华东区域", "生产数据库部署在华北区域", None),
    ("团队决定订单服务使用PostgreSQL", "团队决定订单服务使用MySQL", None),
    ("小明有两只猫", "小明有三只猫", "number"),
    ("报告需要在每周一上午发送", "报告需要在每周五上午发送", "date"),
    ("用户希望回答简短，用要点列出", "用户希望回答详细，用要点列出", None),
    ("刘洋已经开启了两步验证", "刘洋已经关闭了两步验证", "antonym"),
    ("市场部季度预算是五万元", "市场部季度预算是八万元", "number"),
    ("陈静喜欢早上跑步", "陈静喜欢晚上跑步", "antonym"),
    ("接口限流提高到每分钟一千次", "接口限流提高到每分钟两千次", "number"),
    ("赵磊是素食者，不吃鱼", "赵磊是素食者，也吃鱼", "negation"),
    ("办公室周六上午开放", "办公室周六上午关闭", "antonym"),
    ("孙丽批准了数据平台的供应商合同", "孙丽拒绝了数据平台的供应商合同", None),
    ("夜间备份任务在凌晨两点开始", "夜间备份任务在凌晨三点开始", "number"),
    ("退款政策允许三十天内退货", "退款政策允许十四天内退货", "number"),
    ("用户希望界面使用大号字体", "用户希望界面使用小号字体", "antonym"),
    ("周芳可以亲自参加会议", "周芳不能亲自参加会议", "negation"),
    ("移动应用支持离线模式", "移动应用支持在线模式", "antonym"),
    ("吴刚负责搜索索引服务", "吴刚负责账单对账服务", None),
    ("客户喜欢在中午之前开会", "客户喜欢在中午之后开会", None),
    ("仓库团队上早班", "仓库团队上晚班", "antonym"),
    ("新电脑有三十二GB内存", "新电脑有十六GB内存", "number"),
    ("郑敏的生日是八月十四日", "郑敏的生日是八月二十四日", "number"),
]

# Rewordings with a synonym (hand-written): the same memory said with another word.
EN_SYNONYMS = [
    ("Alice likes green tea in the morning", "Alice enjoys green tea in the morning"),
    ("User prefers dark mode in the code editor", "User likes dark mode in the code editor"),
    ("Grace wants weekly reports about the billing service", "Grace needs weekly reports about the billing service"),
    ("The team will start the migration on Monday", "The team will begin the migration on Monday"),
    ("Bob bought a new laptop for the data team", "Bob purchased a new laptop for the data team"),
    ("Carol often works from the Lisbon office", "Carol frequently works from the Lisbon office"),
    ("Kate loves hiking with her dog on weekends", "Kate enjoys hiking with her dog on weekends"),
    ("The dashboard shows errors from the payment service", "The dashboard displays errors from the payment service"),
    ("Leo asked the team to fix the login bug quickly", "Leo asked the team to resolve the login bug quickly"),
    ("Mia uses the staging cluster for load tests", "Mia utilizes the staging cluster for load tests"),
    ("Send the summary to Nora by email after the meeting", "Send the summary to Nora by mail after the meeting"),
    ("Oscar needs a large monitor for design reviews", "Oscar needs a big monitor for design reviews"),
]
ZH_SYNONYMS = [
    ("用户喜欢深色模式", "用户偏好深色模式"),
    ("张伟希望每周收到账单报告", "张伟想要每周收到账单报告"),
    ("团队下周一开始数据迁移", "团队下周一启动数据迁移"),
    ("李娜经常在上海办公室工作", "李娜常常在上海办公室工作"),
    ("请尽快修复登录错误", "请尽快解决登录错误"),
    ("王强使用测试集群做压力测试", "王强用测试集群做压力测试"),
]

EN_FILLERS = ["Note: ", "Reminder: ", "FYI, ", "Remember that "]
ZH_FILLERS = ["备注：", "提醒：", "记住："]


def en_variants(text, rng):
    words = text.split()
    typo_at = rng.choice([i for i, w in enumerate(words) if w.isalpha() and len(w) > 3])  # a slip, never a number
    w = words[typo_at]
    typo = w[:-2] + w[-1] + w[-2] if len(w) > 3 else w + w[-1]
    return [
        ("case", text.upper()),
        ("punctuation", text + "."),
        ("whitespace", "  " + text.replace(" ", "  ") + " "),
        ("article", ("The " + text[0].lower() + text[1:]) if not text.startswith("The ") else text[4].upper() + text[5:]),
        ("filler", rng.choice(EN_FILLERS) + text[0].lower() + text[1:]),
        ("typo", " ".join(words[:typo_at] + [typo] + words[typo_at + 1:])),
        ("suffix", text + " (confirmed)"),
        ("width", text.replace("a", "ａ", 2)),
    ]


def zh_variants(text, rng):
    return [
        ("punctuation", text + "。"),
        ("whitespace", " ".join(text)),
        ("filler", rng.choice(ZH_FILLERS) + text),
        ("particle", text + "了" if not text.endswith("了") else text[:-1]),
        ("suffix", text + "（已确认）"),
        ("width", text.replace("，", ",")),
    ]


def main():
    rng = random.Random(2026)
    pairs = []
    for lang, facts, variants in (("en", EN, en_variants), ("zh", ZH, zh_variants)):
        for i, (a, b, why) in enumerate(facts):
            for kind, v in variants(a, rng):
                if v != a:
                    pairs.append({"a": a, "b": v, "label": "duplicate", "lang": lang, "kind": kind})
            if why:
                pairs.append({"a": a, "b": b, "label": "contradiction", "lang": lang, "kind": why})
                # the contradiction survives a surface variation of one side
                v = variants(b, rng)[1][1]
                pairs.append({"a": a, "b": v, "label": "contradiction", "lang": lang, "kind": why})
            else:
                pairs.append({"a": a, "b": b, "label": "different", "lang": lang, "kind": "other object"})
            other = facts[(i + 1) % len(facts)][0]
            pairs.append({"a": a, "b": other, "label": "different", "lang": lang, "kind": "other fact"})
    for lang, synonyms in (("en", EN_SYNONYMS), ("zh", ZH_SYNONYMS)):
        pairs += [{"a": a, "b": b, "label": "duplicate", "lang": lang, "kind": "synonym"} for a, b in synonyms]
    for n, p in enumerate(pairs):
        p["id"] = f"p{n:03d}"
    out = Path(__file__).with_name("dedup_pairs.json")
    out.write_text(json.dumps(pairs, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    counts = {}
    for p in pairs:
        counts[(p["lang"], p["label"])] = counts.get((p["lang"], p["label"]), 0) + 1
    print(len(pairs), counts)


if __name__ == "__main__":
    main()
