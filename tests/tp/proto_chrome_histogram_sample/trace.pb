
@PÈâ"
R@
PhZ!HXºinternedâoûÿÿÿÿÿÿÿÿ b'ÊMemory.BrowserÊNet.Latency
*@PhZ"HXºinlineâÞInline.Name
&@PhZHXºbothâÍ	Kept.Name 
"@(PhZHXºunknown_iidâ¼ 	