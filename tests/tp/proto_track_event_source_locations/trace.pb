
@P»‚"
L@
PhZHX∫by_iidêb2"base\task\run.ccRun "	poster.ccPost
@PhZHX∫task*
%@PhZHX∫inlineä	inline.cc 
"@(PhZHX∫unknown_iidsê	*