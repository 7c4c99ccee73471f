/*
 * Functions the house style bans (STYLE.md, Build), refused at compile
 * time: build.sh force-includes this header (-include) in every compile of
 * our code, tests and tools, so a call to one of them fails to build with
 * an error naming it (`sorry_strcpy_is_banned`). The system headers that
 * declare them come first, so their own declarations are unaffected.
 * Why: unbounded copies (strcpy, strcat, sprintf, vsprintf, gets), hidden
 * state (strtok), no error reporting (atoi), stack allocation of unchecked
 * size (alloca); strtok_r because every use here has been a
 * hand-rolled tokenizer better written with memchr/strchr.
 */
#ifndef TB_BANNED_H
#define TB_BANNED_H

#include <alloca.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TB_BANNED_(func) sorry_##func##_is_banned

#undef strcpy
#define strcpy(...) TB_BANNED_(strcpy)
#undef strcat
#define strcat(...) TB_BANNED_(strcat)
#undef sprintf
#define sprintf(...) TB_BANNED_(sprintf)
#undef vsprintf
#define vsprintf(...) TB_BANNED_(vsprintf)
#undef strtok
#define strtok(...) TB_BANNED_(strtok)
#undef strtok_r
#define strtok_r(...) TB_BANNED_(strtok_r)
#undef atoi
#define atoi(...) TB_BANNED_(atoi)
#undef gets
#define gets(...) TB_BANNED_(gets)
#undef alloca
#define alloca(...) TB_BANNED_(alloca)

#endif /* TB_BANNED_H */
