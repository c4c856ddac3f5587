"""Default shadow patterns: the seed's ``destructive_action`` veto plus a destructive catalogue.

Triggers use the shadow trigger language of ``kernel.shadow``: plain phrases, or ``re:`` regexes
searched in the normalised description (casefolded, quotes removed, whitespace collapsed, dashes
unified). Regexes stay inside one shell command with ``[^;&|]`` and check structure (flags, a
missing ``WHERE``, a statement end) rather than listing strings, so look-alikes such as
``rm notes.txt``, ``DELETE FROM t WHERE id=3`` or ``truncate the summary`` pass.

The action gateway checks the forms of :func:`kernel.actions.canonical`: a shell argv arrives
joined as a shell shows it (``rm -r -- /home/alice``), each nested payload on its own, and SQL
re-rendered by a parser with a trivially true ``WHERE`` dropped (``DELETE FROM users``), so the
anchors here (``$``, a space) see a command line, never a Python list repr.
"""

from __future__ import annotations

from kernel.patterns import ShadowPattern

_SEG = r"[^;&|]"
"""A character of the same shell command: anything but ``;``, ``&`` or ``|``."""

_ARGS = _SEG + "{0,256}"
"""The rest of one shell command, bounded so that scanning stays linear on huge inputs."""

_OPTS = r"(?:\s+-\S+(?:\s+(?!-)\S+)?){0,4}"
"""Up to four global options (each with an optional value) before a subcommand."""

_GIT = r"\bgit" + _OPTS + r"\s+"
"""``git`` and its global options (``-C dir``, ``--no-pager``), up to the subcommand."""

_FORCE = r"(?:--force(?:-with-lease)?|-[a-z]*f[a-z]*)\b"
"""A force flag of ``git push``."""

_IDENT = r"[\w.$\[\]]+"
"""A (possibly qualified or bracketed) SQL identifier; quotes are gone after normalisation."""

_SQL_END = r"\s*(?:;|$|[&|)}\],]|--)"
"""The end of a SQL statement (or of the value holding it in a dict/list repr)."""

_W = r"[\s_-]+"
"""A word separator in natural-language phrases."""

_PROTECTED_BRANCH = (
    r"(?:main|master|develop|development|dev|trunk|release[\w./-]*|prod|production|staging|"
    r"stable|live)"
)

_STRONG_DELETE = (
    r"(?:delete|erase|wipe|purge|destroy|nuke|shred|obliterate|annihilate|eradicate|expunge|"
    r"permanently" + _W + r"(?:delete|remove|erase))"
)
_WEAK_DELETE = (
    r"(?:remove|clear|drop|trash|discard|empty|flush|scrap|clean"
    + _W
    + r"out|get"
    + (_W + r"rid" + _W + r"of)")
)
_ALL = r"(?:all|every(?:thing|one)?|entire|whole|each|any" + _W + r"and" + _W + r"all)(?!-\w)"
_DET = r"(?:the|my|our|your|their|his|her|its|this|these|those|of)"
_DATA_NOUN = (
    r"(?:files?|folders?|director(?:y|ies)|documents?|docs|e?-?mails?|messages?|inbox(?:es)?|"
    r"contacts?|photos?|pictures?|images?|videos?|recordings?|notes?|records?|rows?|entries|"
    r"tables?|databases?|data|backups?|snapshots?|repos|repositor(?:y|ies)|branches|accounts?|"
    r"users?|customers?|orders?|events?|appointments?|tasks?|logs?|history|chats?|"
    r"conversations?|threads?|posts?|comments?|calendars?|projects?|buckets?|objects?|"
    r"volumes?|disks?|drives?|partitions?|servers?|instances?|clusters?|containers?|vms?|"
    r"keys?|secrets?|passwords?|credentials?|contents?|storage|memories|bookmarks?|"
    r"attachments?|downloads?|uploads?|collections?|archives?)"
)
_CONTAINER = (
    r"(?:trash|trash" + _W + r"can|recycle" + _W + r"bin|recycling" + _W + r"bin|bin|mailbox|"
    r"inbox|outbox|junk|spam" + _W + r"folder|deleted" + _W + r"items)"
)
_STORAGE = (
    r"(?:drive|disk|hard"
    + _W
    + r"drive|hard"
    + _W
    + r"disk|ssd|hdd|partition|volume|usb(?:"
    + _W
    + r"(?:stick|drive))?|sd"
    + _W
    + r"card|memory"
    + _W
    + r"card)"
)


def _re(regex: str) -> str:
    """Return ``regex`` as a regex trigger."""
    return "re:" + regex


SEED_DESTRUCTIVE_ACTION = ShadowPattern(
    name="destructive_action",
    triggers=["delete all", "drop table", "rm -rf"],
    severity=1.0,
    explanation="Destructive actions require explicit user confirmation.",
)

RECURSIVE_DELETE = ShadowPattern(
    name="recursive_delete",
    triggers=[
        # rm with a recursive and a force flag, in any order, combined (-rf, -fR) or split.
        _re(rf"\brm\b(?={_ARGS}\s-(?:-recursive\b|[a-z]*r))(?={_ARGS}\s-(?:-force\b|[a-z]*f))"),
        # recursive rm of a root, home, current or wildcard target, even without force.
        _re(
            rf"\brm\b(?={_ARGS}\s-(?:-recursive\b|[a-z]*r))"
            rf"(?={_ARGS}\s(?:/|/\*|~|~/|~/\*|\*|\.|\./|\./\*|\.\.|\.\./|\$home/?|\$\{{home\}}/?)"
            r"(?:\s|$|[;&|]))"
        ),
        # recursive rm of an absolute or home path outside /tmp (rm -r /home/alice, rm -R -- /srv)
        _re(
            rf"\brm\b(?={_ARGS}\s-(?:-recursive\b|[a-z]*r))"
            rf"(?={_ARGS}\s(?:--\s+)?(?:/(?!tmp/)|~|\$home\b|\$\{{home\}})[^\s;&|]*\s*(?:$|[;&|]))"
        ),
        # rsync --delete into an absolute, home or remote destination (mirrors an empty tree)
        _re(
            rf"\brsync\b(?={_ARGS}\s--(?:del|delete(?:-[a-z]+)?|remove-source-files)\b)"
            rf"(?={_ARGS}\s(?:[\w.@-]+:)?(?:/|~)[^\s;&|]*\s*(?:$|[;&|]))"
        ),
        # find ... -delete / -exec rm, unless a name, path, time or size test scopes it.
        _re(
            rf"\bfind\b(?!{_ARGS}\s-(?:i?name|i?path|i?regex|i?wholename|newer\w*|[amc]"
            r"(?:time|min)|size|user|group|perm|inum|links)\s+(?!\*(?:\s|$))\S)"
            rf"{_ARGS}\s(?:-delete\b|-exec(?:dir)?\s+(?:\S*/)?rm\b)"
        ),
        _re(r"\bshutil\.rmtree\b"),
        _re(r"\brmtree\s*\("),
        _re(r"\brimraf\b"),
        _re(r"\bfs\.(?:rm|rmdir)(?:sync)?\s*\([^)]{0,400}recursive\s*:\s*true"),
        _re(rf"\b(?:remove-item|ri|rm|rmdir|rd|del|erase)\b(?={_ARGS}\s-recurse\b)"),
        _re(rf"\b(?:rd|rmdir|del|erase)\b(?={_ARGS}\s/s\b)"),
    ],
    severity=1.0,
    explanation="Recursive deletion removes whole directory trees; confirm with the user first.",
)

DISK_DESTRUCTION = ShadowPattern(
    name="disk_destruction",
    triggers=[
        _re(r"\bmkfs(?:\.\w+)?\b"),
        _re(r"\b(?:mke2fs|newfs|mkswap\s+/dev/)"),
        _re(r"\bformat(?:\.com)?\s+[a-z]:(?:\s|$|[\\/;&|])"),
        _re(r"\b(?:format-volume|clear-disk)\b"),
        _re(r"\bdiskutil\s+(?:secure)?erase\w*"),
        _re(rf"\bdiskpart\b{_ARGS}\bclean\b"),
        _re(rf"\bdd\b(?={_ARGS}\bof=/dev/(?!null\b|zero\b|stdout\b|stderr\b|tty\b|fd/))"),
        _re(r">\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|md\d|mapper/)"),
        _re(rf"\bwipefs\b(?={_ARGS}\s(?:-[a-z]*a[a-z]*|--all)\b)"),
        _re(rf"\bshred\b(?={_ARGS}\s/dev/)"),
        # emptying or overwriting a file in place: truncate -s 0, dd of=<file> from a zero source
        # (scratch space under /tmp excepted for dd: writing a blob there is routine)
        _re(rf"\btruncate\b(?={_ARGS}\s(?:-s\s*|--size(?:=|\s+))0+[kmgtpe]?b?(?:\s|$|[;&|]))"),
        _re(
            rf"\bdd\b(?={_ARGS}\bif=/dev/(?:zero|u?random)\b)"
            rf"(?={_ARGS}\bof=(?:/(?!tmp/|dev/)|~))"
        ),
        _re(rf"\bshred\b(?={_ARGS}\s-[a-z]*u)"),
        _re(r"\bblkdiscard\b"),
        _re(rf"\bsgdisk\b(?={_ARGS}\s(?:-z|--zap-all|-o|--clear)\b)"),
        _re(r"\bcipher\s+/w\b"),
        _re(r"\b(?:zpool|zfs)\s+destroy\b"),
        _re(r"\b(?:lvremove|vgremove|pvremove)\b"),
        _re(
            r"\b(?:format|reformat)"
            + _W
            + r"(?:(?:the|my|our|this|that|your)"
            + _W
            + r")?(?:[\w-]+"
            + _W
            + r"){0,2}?"
            + _STORAGE
            + r"\b"
        ),
    ],
    severity=1.0,
    explanation="Formatting or overwriting a disk destroys everything on it.",
)

DATABASE_DESTRUCTION = ShadowPattern(
    name="database_destruction",
    triggers=[
        _re(
            r"\bdrop\s+(?:temporary\s+|temp\s+)?(?:table|database|schema|collection|keyspace|"
            rf"tablespace)\s+(?:if\s+exists\s+)?{_IDENT}(?:\s*,\s*{_IDENT})*"
            rf"(?:{_SQL_END}|\s+(?:cascade|restrict|purge)\b)"
        ),
        _re(
            rf"\btruncate\s+(?:table\s+)?(?:only\s+)?{_IDENT}(?:\s*,\s*{_IDENT})*"
            rf"(?:{_SQL_END}|\s+(?:cascade|restrict|restart|continue)\b)"
        ),
        # DELETE FROM t / UPDATE t SET c = ... with no WHERE clause: every row.
        _re(rf"\bdelete\s+from\s+(?:only\s+)?{_IDENT}{_SQL_END}"),
        _re(rf"\bupdate\s+(?:only\s+)?{_IDENT}\s+set\s+{_IDENT}\s*=(?![^;]{{0,2000}}\bwhere\b)"),
        # ... or with a WHERE that is always true (1=1, x=x, true).
        _re(
            r"\b(?:delete\s+from|update)\b[^;]{0,2000}\bwhere\s+(?:(\w+)\s*=\s*\1|true|1|not\s+false)"
            + _SQL_END
        ),
        _re(r"\bdb\.(?:[\w$]+|getcollection\([^)]{0,200}\))\.drop\s*\(\s*\)"),
        _re(r"\bdropdatabase\s*\("),
        _re(r"\.(?:deletemany|remove)\s*\(\s*\{\s*\}\s*\)"),
        _re(r"\bflush(?:all|db)\b"),
        _re(r"\bdropdb\b"),
        _re(rf"\bmysqladmin\b{_ARGS}\bdrop\b"),
        _re(rf"\bcurl\b{_ARGS}-x\s*delete\b(?={_ARGS}(?:/_all\b|/\*))"),
    ],
    severity=1.0,
    explanation="Dropping, truncating or rewriting every row loses data; confirm first.",
)

INFRASTRUCTURE_DESTROY = ShadowPattern(
    name="infrastructure_destroy",
    triggers=[
        _re(
            rf"\b(?:terraform|tofu|terragrunt|pulumi|cdk|cdktf)\b{_ARGS}\s"
            rf"(?:destroy\b|apply\b(?={_ARGS}\s-destroy\b))"
        ),
        _re(
            rf"\bkubectl{_OPTS}\s+delete{_OPTS}\s+(?:namespaces?|ns|nodes?|pv|"
            r"persistentvolumes?|crds?|customresourcedefinitions?|all)(?:/|\s|,|$)"
        ),
        _re(rf"\bkubectl{_OPTS}\s+delete\b(?={_ARGS}\s(?:--all\b|--all-namespaces\b|-a\b))"),
        _re(rf"\baws\s+s3\s+rb\b{_ARGS}\s--force\b"),
        _re(rf"\baws\s+s3\s+rm\b{_ARGS}\s--recursive\b"),
        _re(
            rf"\baws\b{_ARGS}\s(?:delete-stack|terminate-instances|delete-db-instance|"
            r"delete-db-cluster|delete-cluster|delete-table|delete-bucket|delete-file-system|"
            r"delete-repository)\b"
        ),
        _re(rf"\b(?:gsutil|gcloud\s+storage)\b{_ARGS}\srm\b(?={_ARGS}\s-(?:[a-z]*r|-recursive)\b)"),
        _re(rf"\bgcloud\b{_ARGS}\sdelete\b"),
        _re(rf"\baz\b{_ARGS}\s(?:delete|purge)\b"),
        _re(rf"\b(?:eksctl|doctl|heroku|gh|glab|vercel|netlify)\b{_ARGS}[\s:](?:delete|destroy)\b"),
        _re(
            rf"\b(?:docker|podman)\s+system\s+prune\b{_ARGS}\s(?:-[a-z]*a[a-z]*|--all|--volumes)\b"
        ),
        _re(r"\b(?:docker|podman)\s+volume\s+(?:prune|rm)\b"),
        _re(r"\b(?:docker|podman)\s+(?:container\s+|image\s+)?(?:rm|rmi)\b[^;]{0,400}\$\("),
    ],
    severity=1.0,
    explanation="Destroying infrastructure (clusters, buckets, stacks) is hard to undo.",
)

MASS_DELETION = ShadowPattern(
    name="mass_deletion",
    triggers=[
        # a strong delete verb over everything: delete all, purge every contact, wipe the entire
        _re(
            rf"\b{_STRONG_DELETE}(?:{_W}(?:out|off|away|permanently|completely|forever))?"
            rf"{_W}(?:{_DET}{_W}){{0,2}}{_ALL}\b"
        ),
        _re(rf"\b{_STRONG_DELETE}{_W}(?:it|them){_W}all\b"),
        # a softer verb over all of some kind of data: remove all my photos, clear every file
        _re(
            rf"\b{_WEAK_DELETE}(?:{_W}(?:out|off|away))?{_W}(?:{_DET}{_W}){{0,2}}{_ALL}{_W}"
            rf"(?:(?:of{_W})?{_DET}{_W}){{0,2}}(?:[\w-]+{_W}){{0,2}}?{_DATA_NOUN}\b"
        ),
        _re(rf"\b{_WEAK_DELETE}{_W}(?:{_DET}{_W}){{0,2}}everything\b"),
        # emptying a container of deleted or pending mail and files
        _re(
            r"\b(?:empty|purge|wipe|nuke|flush|clear|clean"
            + _W
            + r"out|clear"
            + _W
            + r"out)"
            + _W
            + r"(?:(?:the|my|our|your|this)"
            + _W
            + r")?(?:[\w-]+"
            + _W
            + r")?"
            + _CONTAINER
            + r"\b"
        ),
        # wiping a device or a store
        _re(
            r"\b(?:wipe|erase|nuke|zero"
            + _W
            + r"out)(?:"
            + _W
            + r"(?:out|clean))?"
            + _W
            + r"(?:(?:the|my|our|this|that|your)"
            + _W
            + r")?(?:[\w-]+"
            + _W
            + r"){0,2}?(?:"
            + _STORAGE
            + r"|phone|device|laptop|computer|server|machine|database|db|storage|account|bucket)\b"
        ),
        _re(r"\bfactory" + _W + r"reset\b"),
    ],
    severity=1.0,
    explanation="Deleting all of a user's mail, files or data cannot be undone; ask first.",
)

HISTORY_REWRITE = ShadowPattern(
    name="history_rewrite",
    triggers=[
        # force push naming a shared branch
        _re(
            rf"{_GIT}push\b(?={_ARGS}\s{_FORCE})"
            rf"(?={_ARGS}\s(?:[\w./-]+:)?(?:refs/heads/)?{_PROTECTED_BRANCH}(?:\s|$|[;&|]))"
        ),
        # force push of whatever the current branch tracks (no branch named)
        _re(
            rf"{_GIT}push\b(?={_ARGS}\s{_FORCE})"
            r"(?:\s+-\S+){0,6}(?:\s+(?!-)[\w./:@-]+)?(?:\s+-\S+){0,6}\s*(?:$|[;&|])"
        ),
        _re(rf"{_GIT}push\b(?={_ARGS}\s(?:[\w./-]+:)?\+(?:refs/heads/)?{_PROTECTED_BRANCH}\b)"),
        _re(rf"{_GIT}push\b(?={_ARGS}\s--mirror\b)"),
        _re(
            rf"{_GIT}push\b(?={_ARGS}\s(?:--delete|-d)\s+(?:[\w./-]+\s+)?"
            rf"{_PROTECTED_BRANCH}(?:\s|$|[;&|]))"
        ),
        _re(rf"{_GIT}push\b(?={_ARGS}\s:{_PROTECTED_BRANCH}\b)"),
        _re(rf"{_GIT}reset\b(?={_ARGS}\s--hard\b)"),
        _re(rf"{_GIT}clean\b(?={_ARGS}\s-[a-z]*f)(?={_ARGS}\s-[a-z]*[dx])"),
        _re(rf"{_GIT}filter-(?:branch|repo)\b"),
        _re(rf"{_GIT}stash\s+clear\b"),
    ],
    severity=1.0,
    explanation="Rewriting or discarding shared history loses other people's work.",
)

SYSTEM_DESTRUCTION = ShadowPattern(
    name="system_destruction",
    triggers=[
        _re(rf"\bcrontab\b{_ARGS}\s-[a-z]*r[a-z]*\b"),
        _re(rf"\bvssadmin\b{_ARGS}\bdelete\s+shadows\b"),
        _re(rf"\bwmic\b{_ARGS}\bshadowcopy\s+delete\b"),
        _re(r"\bwevtutil\s+(?:cl|clear-log)\b"),
        _re(rf"\bmv\b{_ARGS}\s/dev/null\b"),
        _re(
            rf"\bch(?:mod|own)\b(?={_ARGS}\s(?:-[a-z]*r[a-z]*|--recursive)\b)"
            rf"(?={_ARGS}\s/(?:\*)?(?:\s|$|[;&|]))"
        ),
        _re(r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:"),
    ],
    severity=1.0,
    explanation="This wipes system state (cron, shadow copies, logs, permissions) or hangs it.",
)

DEFAULT_VETO_PATTERNS: list[ShadowPattern] = [
    SEED_DESTRUCTIVE_ACTION,
    RECURSIVE_DELETE,
    DISK_DESTRUCTION,
    DATABASE_DESTRUCTION,
    INFRASTRUCTURE_DESTROY,
    MASS_DELETION,
    HISTORY_REWRITE,
    SYSTEM_DESTRUCTION,
]
"""The seed's ``destructive_action`` veto (its three literal triggers) and the catalogue."""

DEFAULT_BIAS_PATTERNS: list[ShadowPattern] = [
    ShadowPattern(
        name="repetitive_loop",
        triggers=["same tool", "repeated"],
        severity=0.3,
        explanation="Detected repetitive pattern - try a different approach.",
    ),
    ShadowPattern(
        name="forced_operation",
        triggers=[
            _re(
                r"(?:^|\s)--(?:force|yes|assume-yes|no-verify|no-preserve-root|"
                r"skip-final-snapshot|force-with-lease)\b"
            ),
            "permanently",
        ],
        severity=0.2,
        explanation="Forcing past safety prompts; prefer the interactive or reversible form.",
    ),
    ShadowPattern(
        name="privilege_escalation",
        triggers=[
            "sudo",
            "doas",
            _re(r"\brunas\b"),
            _re(r"\bsu\s+(?:-|root)(?:\s|$)"),
            _re(r"\bchmod\s+(?:-\S+\s+)*0?777\b"),
        ],
        severity=0.2,
        explanation="Running with elevated privileges widens the blast radius of a mistake.",
    ),
    ShadowPattern(
        name="remote_code_pipe",
        triggers=[
            _re(
                r"\b(?:curl|wget|iwr|invoke-webrequest)\b[^;&]{0,400}\|\s*(?:sudo\s+)?"
                r"(?:ba|z|da|k)?sh\b"
            ),
            _re(r"\b(?:iex|invoke-expression)\b"),
        ],
        severity=0.3,
        explanation="Piping downloaded code into a shell runs it unreviewed.",
    ),
]
"""The seed's ``repetitive_loop`` bias and a few soft penalties for risky habits."""
