"""Chinese personal names: the surnames that mark a new word as a person's name (entity memory, seed
000 "entities"; chat turns, where a name before a colon is a speaker)."""

# The most common Chinese surnames (a new word starting with one, or one before a title, is a person).
SURNAMES = frozenset("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任"
                     "沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤")
COMPOUND_SURNAMES = frozenset("欧阳 司马 上官 诸葛 东方 皇甫 尉迟 公孙 慕容 夏侯 令狐 长孙 宇文 司徒 端木".split())
