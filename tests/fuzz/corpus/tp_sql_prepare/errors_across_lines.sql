select 1; select
 bad2 from 'x;
  /* c */ selec nosuchfn(3) as c;
